/**
 * Keeps one receiver from delaying the others: deliveries to one origin take at most
 * `perOriginConcurrency` places at once, and a circuit per origin opens after
 * `failuresToOpen` attempts in a row that met no answer worth the name (a timeout, a refused
 * connection, 408, 429, 5xx). While it is open the origin is skipped, its deliveries waiting
 * (no attempt is counted, nothing is dropped); after `coolDownMs` one attempt probes it, and
 * an answer closes the circuit again.
 *
 * The state is this instance's own memory: another instance learns the same on its own, and a
 * restart forgets it, which costs at most `failuresToOpen` attempts more.
 */

export interface OriginGatePolicy {
  perOriginConcurrency: number;
  failuresToOpen: number;
  coolDownMs: number;
}

export type Admission = { kind: 'go' } | { kind: 'busy' } | { kind: 'open'; until: number };

interface OriginState {
  inFlight: number;
  /** Attempts in a row that met no answer. */
  failures: number;
  /** Until when the circuit is open, once `failures` reached the policy's bound. */
  openUntil: number;
}

const go: Admission = { kind: 'go' };
const busy: Admission = { kind: 'busy' };

export class OriginGate {
  readonly #origins = new Map<string, OriginState>();
  readonly #policy: OriginGatePolicy;
  readonly #now: () => number;

  constructor(policy: OriginGatePolicy, now: () => number) {
    this.#policy = policy;
    this.#now = now;
  }

  /** Whether an attempt to `origin` may start now; takes no place. */
  check(origin: string): Admission {
    const state = this.#origins.get(origin);
    if (!state) return go;
    if (state.failures >= this.#policy.failuresToOpen) {
      if (this.#now() < state.openUntil) return { kind: 'open', until: state.openUntil };
      // Half open: a single attempt finds out whether the origin answers again.
      return state.inFlight === 0 ? go : busy;
    }
    return state.inFlight < this.#policy.perOriginConcurrency ? go : busy;
  }

  /** Takes a place for one attempt when `check` allows it; says whether it did. */
  enter(origin: string): boolean {
    if (this.check(origin).kind !== 'go') return false;
    const state = this.#origins.get(origin) ?? { inFlight: 0, failures: 0, openUntil: 0 };
    state.inFlight += 1;
    this.#origins.set(origin, state);
    return true;
  }

  /**
   * Gives the place back: `answered` (any answer but a retriable one) closes the circuit,
   * `unanswered` counts toward opening it, and `unused` (the attempt was never made) neither.
   */
  leave(origin: string, result: 'answered' | 'unanswered' | 'unused'): void {
    const state = this.#origins.get(origin);
    if (!state) return;
    state.inFlight = Math.max(0, state.inFlight - 1);
    if (result === 'answered') state.failures = 0;
    if (result === 'unanswered') {
      state.failures += 1;
      if (state.failures >= this.#policy.failuresToOpen) state.openUntil = this.#now() + this.#policy.coolDownMs;
    }
    // Healthy origins are forgotten, so the map holds only the ones in use or failing.
    if (state.inFlight === 0 && state.failures === 0) this.#origins.delete(origin);
  }
}
