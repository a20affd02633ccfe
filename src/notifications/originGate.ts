/**
 * Keeps one receiver from delaying the others: deliveries to one origin take at most
 * `perOriginConcurrency` places at once, and a circuit per origin opens after
 * `failuresToOpen` attempts in a row that met no answer worth the name (a timeout, a refused
 * connection, 408, 429, 5xx). While it is open the origin is skipped, its deliveries waiting
 * (no attempt is counted, nothing is dropped); after `coolDownMs` one attempt probes it, and
 * an answer closes the circuit again.
 *
 * This is one instance's view. The open state is shared by the whole app through a record in
 * storage (sharedCircuit.ts): an origin another instance found dark is `hold`-ed open here until
 * the app-wide record says otherwise (no probe is made here unless the record gave it to this
 * instance), and when storage cannot say, the gate runs on this instance's own memory.
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
  /**
   * Open because the app-wide record says so: `held`, no probe from here until the record gives
   * one; `released`, on this instance's timing while the record is not read (storage could not say).
   */
  record?: 'held' | 'released';
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
      if (state.record === 'held' || this.#now() < state.openUntil) return { kind: 'open', until: state.openUntil };
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
   * Says 'opened' when this very attempt opened the circuit (the failures reached the bound).
   */
  leave(origin: string, result: 'answered' | 'unanswered' | 'unused'): 'opened' | undefined {
    const state = this.#origins.get(origin);
    if (!state) return undefined;
    state.inFlight = Math.max(0, state.inFlight - 1);
    if (result === 'answered') {
      state.failures = 0;
      state.record = undefined;
    }
    let opened = false;
    if (result === 'unanswered') {
      state.failures += 1;
      opened = state.failures === this.#policy.failuresToOpen;
      if (opened) state.record = undefined;
      if (state.failures >= this.#policy.failuresToOpen) state.openUntil = this.#now() + this.#policy.coolDownMs;
    }
    this.#forgetIfHealthy(origin, state);
    return opened ? 'opened' : undefined;
  }

  /** Whether the circuit of `origin` is open (or half open) in this instance's view. */
  isOpen(origin: string): boolean {
    return (this.#origins.get(origin)?.failures ?? 0) >= this.#policy.failuresToOpen;
  }

  /** Until when `origin` is open here, if it is. */
  openUntil(origin: string): number | undefined {
    return this.isOpen(origin) ? this.#origins.get(origin)!.openUntil : undefined;
  }

  /** Holds `origin` open, as the app-wide record says, until released; `until` is its next probe time. */
  hold(origin: string, until: number): void {
    this.#set(origin, { failures: this.#policy.failuresToOpen, openUntil: until, record: 'held' });
  }

  /** Half opens `origin` for the one probe the app-wide record gave this instance. */
  probe(origin: string): void {
    this.#set(origin, { failures: this.#policy.failuresToOpen, openUntil: this.#now(), record: 'released' });
  }

  /** Closes `origin`: the app-wide record is gone (a probe was answered somewhere). */
  close(origin: string): void {
    this.#set(origin, { failures: 0, openUntil: 0 });
  }

  /** Lets held origins (`origin`, or all) run on this instance's own timing again, until the record is read. */
  release(origin?: string): void {
    for (const [name, state] of this.#origins) if (state.record === 'held' && (origin === undefined || name === origin)) state.record = 'released';
  }

  /** Whether `origin` is open as the app-wide record said (held or released), not by this instance's own failures. */
  openByRecord(origin: string): boolean {
    return this.#origins.get(origin)?.record !== undefined;
  }

  #set(origin: string, change: Omit<OriginState, 'inFlight'>): void {
    const state = { inFlight: this.#origins.get(origin)?.inFlight ?? 0, ...change };
    this.#origins.set(origin, state);
    this.#forgetIfHealthy(origin, state);
  }

  /** Healthy origins are forgotten, so the map holds only the ones in use or failing. */
  #forgetIfHealthy(origin: string, state: OriginState): void {
    if (state.inFlight === 0 && state.failures === 0) this.#origins.delete(origin);
  }
}
