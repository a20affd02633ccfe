/**
 * The receivers' circuits shared by the app's instances, so that a receiver gone dark is probed
 * once per cool-down by the whole app, not once by each instance. Each instance still counts its
 * own unanswered attempts in a row (OriginGate); what is shared is the open state, in one record
 * per origin (circuitRecords.ts), there only while the circuit is open:
 *
 * - at the start of a poller run's delivery pass, the record of each origin with deliveries due is
 *   read (one read per origin, kept for the run). No record: the circuit is closed. A record whose
 *   next probe time is to come: the origin is held open here, whatever this instance saw. A record
 *   whose cool-down is over: the instance tries to take the probe by moving the next probe time on
 *   by one cool-down, conditioned on the ETag it read; of the instances trying at once, the one
 *   whose write wins sends the one attempt, the others hold the origin open;
 * - the instance whose attempts open the circuit creates the record (no write if another did);
 * - an answered attempt (the probe, or any attempt that was under way) removes the record, on the
 *   ETag this instance knew when the attempt was admitted (or, admitted before the record, the one
 *   it knows now), closing the circuit for every instance from its next run on, even when the
 *   answer comes after the next run started.
 *
 * A failed probe writes nothing: taking it already moved the next probe time on. When storage
 * cannot answer within its budget, the gate runs on this instance's own memory (as it did before
 * the record existed), and one line says so, another when storage answers again; for a cool-down after a
 * failure the records are not tried at all (a run does not wait on storage known to be failing
 * before its deliveries), then the next call tries again.
 */
import { mapConcurrently } from '../concurrency';
import { OutageLatch } from '../storage';
import type { CircuitRecord, CircuitRecords } from './circuitRecords';
import type { OriginGate, OriginGatePolicy } from './originGate';

export interface SharedCircuitOptions {
  gate: OriginGate;
  records: Pick<CircuitRecords, 'read' | 'open' | 'takeProbe' | 'close'>;
  policy: OriginGatePolicy;
  now: () => number;
  log: (line: string) => void;
  /** Reads at once at the start of a run. */
  concurrency: number;
}

export class SharedCircuit {
  readonly #options: SharedCircuitOptions;
  /** The records this instance read or wrote in the current run, by origin. */
  readonly #known = new Map<string, CircuitRecord>();
  /** The reads of the current run, by origin: one each. */
  readonly #reads = new Map<string, Promise<void>>();
  /** Whether storage answers: after a failure it is not tried for a cool-down (this instance's clock); the fallback is logged once, not once a run. */
  readonly #storage: OutageLatch;

  constructor(options: SharedCircuitOptions) {
    this.#options = options;
    this.#storage = new OutageLatch({
      subject: 'receiver circuits',
      fallback: "each instance runs its own receivers' circuits",
      retryAfterMs: options.policy.coolDownMs,
      retry: 'every call',
      now: options.now,
      log: options.log,
    });
  }

  /** The start of a run's delivery pass: the records of `origins` (those with deliveries due), one read each. */
  async refresh(origins: readonly string[]): Promise<void> {
    this.#known.clear();
    this.#reads.clear();
    // What is not read again in this run runs on this instance's timing.
    this.#options.gate.release();
    await this.learn(origins);
  }

  /** Reads the records of `origins` not read yet in this run (an outbox marked without its origins names them only once read). */
  async learn(origins: readonly string[]): Promise<void> {
    const unread = [...new Set(origins)].filter((origin) => !this.#reads.has(origin));
    const done = new Map<string, () => void>();
    for (const origin of unread) this.#reads.set(origin, new Promise<void>((resolve) => done.set(origin, resolve)));
    await mapConcurrently(unread, this.#options.concurrency, async (origin) => {
      try {
        await this.#refreshOne(origin);
      } finally {
        done.get(origin)!();
      }
    });
    // Those another worker of the run is reading: the admission waits for their answer.
    await Promise.all(origins.map((origin) => this.#reads.get(origin)));
  }

  /** The record known as an attempt to `origin` is admitted: `after` closes it, even once a later run forgot it. */
  admit(origin: string): CircuitRecord | undefined {
    return this.#known.get(origin);
  }

  /** After an attempt to `origin` (`opened`: it opened this instance's circuit; `admitted`: what `admit` gave). */
  async after(origin: string, result: 'answered' | 'unanswered', opened: 'opened' | undefined, admitted?: CircuitRecord): Promise<void> {
    const { gate, records } = this.#options;
    const known = this.#known.get(origin);
    if (result === 'answered') {
      const record = admitted ?? known;
      if (!record) return;
      if (known?.etag === record.etag) this.#known.delete(origin);
      await this.#shared(origin, () => records.close(origin, record.etag));
      return;
    }
    // The record already says when the next probe is (a failed probe moved it when it was taken).
    if (known) gate.hold(origin, known.nextProbeAt);
    else if (opened === 'opened') await this.#publish(origin);
  }

  async #refreshOne(origin: string): Promise<void> {
    const { gate, records, policy, now } = this.#options;
    const record = await this.#shared(origin, () => records.read(origin));
    if (record === 'unavailable') return;
    if (!record) {
      // Closed app-wide: a probe was answered elsewhere (or the janitor removed a stale record).
      if (gate.openByRecord(origin)) gate.close(origin);
      // Opened here while storage could not record it: the others learn it now.
      else if (gate.isOpen(origin)) await this.#publish(origin);
      return;
    }
    this.#known.set(origin, record);
    if (record.nextProbeAt > now()) return gate.hold(origin, record.nextProbeAt);
    const nextProbeAt = now() + policy.coolDownMs;
    const taken = await this.#shared(origin, () => records.takeProbe(origin, record.etag, nextProbeAt));
    if (taken === 'unavailable') return;
    if (taken === undefined) {
      // Another instance took it: its write moved the next probe time on by about as much.
      this.#known.delete(origin);
      return gate.hold(origin, nextProbeAt);
    }
    this.#known.set(origin, { etag: taken, nextProbeAt });
    gate.probe(origin);
  }

  /** Records the circuit this instance opened, unless another instance's record is there first. */
  async #publish(origin: string): Promise<void> {
    const { gate, records, policy, now } = this.#options;
    const nextProbeAt = gate.openUntil(origin) ?? now() + policy.coolDownMs;
    const etag = await this.#shared(origin, () => records.open(origin, nextProbeAt));
    if (etag === 'unavailable') return;
    // Another instance's record was there first: the circuit is open app-wide all the same.
    if (etag !== undefined) this.#known.set(origin, { etag, nextProbeAt });
    gate.hold(origin, nextProbeAt);
  }

  /** A storage call of the record; 'unavailable' when storage failed it (the origin then runs on this instance's gate). */
  async #shared<T>(origin: string, call: () => Promise<T>): Promise<T | 'unavailable'> {
    const { gate } = this.#options;
    if (!this.#storage.shouldTry()) {
      gate.release(origin);
      this.#known.delete(origin);
      return 'unavailable';
    }
    try {
      const answer = await call();
      this.#storage.answered();
      return answer;
    } catch (error) {
      this.#storage.failed(error);
      gate.release(origin);
      this.#known.delete(origin);
      return 'unavailable';
    }
  }
}
