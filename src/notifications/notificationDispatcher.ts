/**
 * Makes the deliveries of ended orchestrations so that no receiver delays another, and none
 * delays the poller:
 *
 * - each receiver's origin passes an OriginGate (a few attempts at once, a circuit that skips
 *   it for a while after failures in a row), its open state shared by the app's instances
 *   (sharedCircuit.ts: read once per origin at the start of a run);
 * - first attempts go before retries, and retries take at most half of the instance's places;
 * - a poller run starts attempts and waits for them at most `deliveryWaitMs`: a slower one is
 *   recorded when it ends, after the run. If the instance stops first, its claim lapses and a
 *   later run makes the attempt again (at least once, with the same event id).
 *
 * Each attempt is claimed with a conditional write (two instances never send the same one),
 * and each outcome written on its own, as soon as it is known.
 */
import { endEventType, type CloudEvent, type NotificationSender } from './notificationSender';
import type { DeliveryParts, EndDeliveries, OrchestrationSettings } from '../orchestration';
import type { OutboxEntry } from '../orchestration';
import type { OrchestrationState } from '../orchestration';
import type { StoredState } from '../orchestration';
import { OriginGate, type Admission } from './originGate';
import type { CircuitRecord, CircuitRecords } from './circuitRecords';
import { SharedCircuit } from './sharedCircuit';
import {
  afterAttempt,
  claimDeliveries,
  droppedDelivery,
  droppedReason,
  dueDeliveries,
  isTargetAllowed,
  nextDeliveryAt,
  outboxHint,
  type Delivery,
  type DeliveryOutcome,
  type OutboxHint,
} from '../orchestration';
import { endEventData } from '../orchestration';
import { cloudEventTracing } from '../telemetry';

export type DispatchSettings = Pick<
  OrchestrationSettings,
  'outbox' | 'allowedOrigins' | 'notifyUrl' | 'concurrency' | 'deliveryBatch' | 'originGate' | 'deliveryWaitMs'
>;

/** Who is told, and the circuits shared by the instances. */
export interface DeliveryChannels {
  /** Sends one notification to a target; absent when no signing secret is configured: no target can then be named. */
  notifier?: Pick<NotificationSender, 'send'>;
  /** The receivers' circuits shared by the instances (sharedCircuit.ts); absent, each instance keeps its own. */
  circuits?: CircuitRecords;
}

export type DispatcherDependencies = Omit<DeliveryParts, 'settings'> & DeliveryChannels & { settings: DispatchSettings };

/** A delivery with no signing secret to sign it with: given up, not retried. */
export const notConfigured: DeliveryOutcome = { delivered: false, retriable: false, error: 'notifications are not configured (NOTIFY_SIGNING_SECRET)' };

function originOf(target: string): string {
  return new URL(target).origin;
}

/** The event telling of an orchestration's end: the same on every attempt. */
function endEventOf(state: OrchestrationState, eventId: string): CloudEvent {
  const appBase = state.appBase ?? '';
  return {
    specversion: '1.0',
    id: eventId,
    source: appBase || 'urn:gateway',
    type: endEventType(state.runtimeStatus),
    subject: state.id,
    time: state.endedTime ?? state.lastUpdatedTime,
    datacontenttype: 'application/json',
    data: endEventData(state, appBase),
    // CloudEvents' distributed tracing extension: the start's trace, for the receiver to join.
    ...cloudEventTracing(state),
  };
}

/** Waits for `work` to settle, or `ms`, whichever comes first. */
async function settledWithin(work: readonly Promise<unknown>[], ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([Promise.allSettled(work), new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

export class NotificationDispatcher implements EndDeliveries {
  readonly #deps: DispatcherDependencies;
  readonly #gate: OriginGate;
  /** The circuits' open state shared with the other instances; absent, each instance's own. */
  readonly #circuit?: SharedCircuit;
  /** Attempts in flight in this instance, and how many of them are retries. */
  #slots = 0;
  #retrySlots = 0;
  readonly #attempts = new Set<Promise<void>>();
  /** Per orchestration, the last write of its outbox: its outcomes are written one after another. */
  readonly #writes = new Map<string, Promise<StoredState>>();
  /** Per origin, outboxes being read for it by runs: no more are read than it could take. */
  readonly #reading = new Map<string, number>();
  /** Runs waiting for a place to free (see #released). */
  #releaseListeners: (() => void)[] = [];

  constructor(deps: DispatcherDependencies) {
    this.#deps = deps;
    this.#gate = new OriginGate(deps.settings.originGate, deps.now);
    if (deps.circuits && deps.notifier)
      this.#circuit = new SharedCircuit({
        gate: this.#gate,
        records: deps.circuits,
        policy: deps.settings.originGate,
        now: deps.now,
        log: deps.log,
        concurrency: deps.settings.concurrency,
      });
  }

  /**
   * A poller run's share: the due outboxes, first attempts first, read as their receivers can
   * take an attempt, until `endsAt`. An outbox whose receivers are busy waits in the run for one
   * of their attempts to end, and the run for its attempts, both at most `deliveryWaitMs` (real
   * time: it bounds how long deliveries hold the run); one whose receivers' circuits are open is
   * left for a later run, unread. Returns how many attempts the run started; those still in
   * flight at its end are recorded after it.
   */
  async run(endsAt: number): Promise<number> {
    const { index, settings, now } = this.#deps;
    const waitEndsAt = performance.now() + settings.deliveryWaitMs;
    const queue = this.#ordered(await index.dueOutboxes(now())).slice(0, settings.deliveryBatch);
    await this.#circuit?.refresh(queue.flatMap((entry) => entry.hint?.origins ?? []));
    const started: Promise<void>[] = [];
    const worker = async () => {
      while (now() < endsAt) {
        const next = this.#nextStartable(queue);
        if (next === undefined) {
          // Nothing can start now: wait for an attempt or a read to end, if one is under way and any outbox waits.
          if (queue.length === 0 || (this.#slots === 0 && this.#reading.size === 0) || performance.now() >= waitEndsAt) return;
          await this.#released(waitEndsAt);
          continue;
        }
        const origins = next.hint?.origins ?? [];
        this.#countReading(origins, 1);
        try {
          const { attempts, waiting } = await this.#start(next.id);
          started.push(...attempts);
          // What its receivers could not take yet waits in this run, known by its origins now.
          if (waiting) queue.push({ ...next, hint: waiting });
        } catch (error) {
          this.#logError(next.id, error);
        } finally {
          this.#countReading(origins, -1);
          this.#wake();
        }
      }
    };
    await Promise.all(Array.from({ length: settings.concurrency }, worker));
    await settledWithin(started, waitEndsAt - performance.now());
    return started.length;
  }

  /** Makes the due deliveries of one orchestration and waits for them. Returns how many attempts it made. */
  async deliver(id: string): Promise<number> {
    const { attempts } = await this.#start(id);
    await Promise.all(attempts);
    return attempts.length;
  }

  /** Resolves once no attempt of this instance is in flight (tests; a host shutting down). */
  async idle(): Promise<void> {
    while (this.#attempts.size > 0) await Promise.allSettled([...this.#attempts]);
  }

  /** First attempts first (they wait behind no retry), then by due time. */
  #ordered(entries: readonly OutboxEntry[]): OutboxEntry[] {
    const lane = (entry: OutboxEntry) => (entry.hint?.fresh ? 0 : 1);
    return [...entries].sort((a, b) => lane(a) - lane(b) || a.dueAt - b.dueAt);
  }

  /**
   * Takes from `queue` the first outbox worth reading now: a place is free in its lane and one of
   * its receivers can take an attempt (an outbox without a hint is read to learn them). Outboxes
   * whose every receiver's circuit is open leave the queue: they wait for a later run.
   */
  #nextStartable(queue: OutboxEntry[]): OutboxEntry | undefined {
    const { settings } = this.#deps;
    for (let position = 0; position < queue.length; position += 1) {
      const { hint } = queue[position]!;
      const admissions = (hint?.origins ?? []).map((origin) => this.#admission(origin));
      if (hint && admissions.length > 0 && admissions.every((kind) => kind === 'open')) {
        queue.splice(position, 1);
        position -= 1;
        continue;
      }
      const laneFull = this.#slots >= settings.concurrency || (hint?.fresh === false && this.#retrySlots >= this.#retryPlaces());
      if (laneFull || (hint && admissions.length > 0 && !admissions.includes('go'))) continue;
      return queue.splice(position, 1)[0];
    }
    return undefined;
  }

  /** The gate's answer, `busy` too while as many outboxes are being read for the origin as it takes at once. */
  #admission(origin: string): Admission['kind'] {
    const kind = this.#gate.check(origin).kind;
    return kind === 'go' && (this.#reading.get(origin) ?? 0) >= this.#deps.settings.originGate.perOriginConcurrency ? 'busy' : kind;
  }

  #countReading(origins: readonly string[], change: 1 | -1): void {
    for (const origin of origins) {
      const count = (this.#reading.get(origin) ?? 0) + change;
      if (count > 0) this.#reading.set(origin, count);
      else this.#reading.delete(origin);
    }
  }

  #retryPlaces(): number {
    return Math.ceil(this.#deps.settings.concurrency / 2);
  }

  /** Resolves when a place may have freed (an attempt ended, a read finished), or at `deadline` (performance.now() time). */
  #released(deadline: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, Math.max(0, deadline - performance.now()));
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.#releaseListeners.push(done);
    });
  }

  /**
   * Claims the due deliveries of one orchestration that may go now, drops those whose origin is
   * no longer allowed, and starts the attempts. Returns them, running, and what of the outbox
   * still waits for a place.
   */
  async #start(id: string): Promise<{ attempts: Promise<void>[]; waiting?: OutboxHint }> {
    const { store, settings, now } = this.#deps;
    const stored = await store.read(id);
    const at = now();
    const due = dueDeliveries(stored?.state.deliveries, at);
    if (!stored || due.length === 0) {
      await this.#mark(id, stored?.state.deliveries);
      return { attempts: [] };
    }
    await this.#circuit?.learn(due.map((delivery) => originOf(delivery.target)));
    const dropped = new Set(
      due.filter((delivery) => !isTargetAllowed(delivery.target, settings.allowedOrigins, settings.notifyUrl)).map((delivery) => delivery.eventId),
    );
    const taken = due.filter((delivery) => !dropped.has(delivery.eventId) && this.#take(delivery));
    // The shared record each attempt was admitted on (read now, before any wait): its answer closes that one.
    const admitted = new Map(taken.map((delivery) => [delivery.eventId, this.#circuit?.admit(originOf(delivery.target))]));
    const left = due.filter((delivery) => !dropped.has(delivery.eventId) && !taken.includes(delivery));
    const waiting = left.length > 0 ? outboxHint(left) : undefined;
    if (dropped.size === 0 && taken.length === 0) return { attempts: [], waiting };
    const claims = claimDeliveries(stored.state.deliveries ?? [], new Set(taken.map((delivery) => delivery.eventId)), at + settings.outbox.claimMs);
    const claimedState = {
      ...stored.state,
      deliveries: claims.map((delivery) => (dropped.has(delivery.eventId) ? droppedDelivery(delivery, droppedReason) : delivery)),
    };
    let etag: string | undefined;
    try {
      etag = (await store.replace(claimedState, stored.etag))?.etag;
    } finally {
      if (etag === undefined) for (const delivery of taken) this.#release(delivery, 'unused');
    }
    if (etag === undefined) return { attempts: [] };
    for (const delivery of claimedState.deliveries) if (dropped.has(delivery.eventId)) this.#logDelivery(id, delivery);
    const base = { state: claimedState, etag };
    const marked = this.#afterWrites(id, base, async () => {
      await this.#mark(id, claimedState.deliveries);
      return base;
    });
    const attempts = taken.map((delivery) => this.#track(id, this.#attempt(id, base, delivery, admitted.get(delivery.eventId))));
    await marked.catch((error: unknown) => this.#logError(id, error));
    return { attempts, waiting };
  }

  /** Takes a place for an attempt if the instance, the lane and the receiver's origin have one. */
  #take(delivery: Delivery): boolean {
    const { settings, notifier } = this.#deps;
    const retry = delivery.attempts > 0;
    if (this.#slots >= settings.concurrency || (retry && this.#retrySlots >= this.#retryPlaces())) return false;
    if (notifier && !this.#gate.enter(originOf(delivery.target))) return false;
    this.#slots += 1;
    if (retry) this.#retrySlots += 1;
    return true;
  }

  /** Gives the places back; says whether the attempt opened the origin's circuit. */
  #release(delivery: Delivery, result: 'answered' | 'unanswered' | 'unused'): 'opened' | undefined {
    this.#slots -= 1;
    if (delivery.attempts > 0) this.#retrySlots -= 1;
    const opened = this.#deps.notifier ? this.#gate.leave(originOf(delivery.target), result) : undefined;
    this.#wake();
    return opened;
  }

  #wake(): void {
    const listeners = this.#releaseListeners;
    this.#releaseListeners = [];
    for (const listener of listeners) listener();
  }

  async #attempt(id: string, base: StoredState, delivery: Delivery, admitted: CircuitRecord | undefined): Promise<void> {
    const { notifier, settings, now } = this.#deps;
    let outcome: DeliveryOutcome;
    try {
      outcome = notifier ? await notifier.send(delivery.target, endEventOf(base.state, delivery.eventId)) : notConfigured;
    } catch {
      outcome = { delivered: false, retriable: true, error: 'internal error' };
    }
    // Any answer but a retriable one shows the receiver is there (a 400 is its own verdict).
    const result = outcome.delivered || !outcome.retriable ? 'answered' : 'unanswered';
    const opened = this.#release(delivery, result);
    const shared = this.#circuit?.after(originOf(delivery.target), result, opened, admitted);
    const written = await this.#afterWrites(id, base, async (latest) => {
      const after = await this.#deps.write(latest, (state) => ({
        ...state,
        deliveries: (state.deliveries ?? []).map((each) =>
          each.eventId === delivery.eventId && each.state === 'pending' ? afterAttempt(each, outcome, now(), settings.outbox) : each,
        ),
      }));
      await this.#mark(id, after.state.deliveries);
      return after;
    });
    const recorded = written.state.deliveries?.find((each) => each.eventId === delivery.eventId);
    if (recorded) this.#logDelivery(id, recorded);
    await shared;
  }

  /**
   * Runs `step` after the writes of this orchestration's outbox already under way here, from
   * the latest state they wrote: outcomes arriving together do not race for one ETag, and the
   * index marker is written in the same order as the document.
   */
  #afterWrites(id: string, base: StoredState, step: (latest: StoredState) => Promise<StoredState>): Promise<StoredState> {
    const previous = this.#writes.get(id) ?? Promise.resolve(base);
    const next = previous.catch(() => base).then(step);
    this.#writes.set(id, next);
    const forget = () => {
      if (this.#writes.get(id) === next) this.#writes.delete(id);
    };
    next.then(forget, forget);
    return next;
  }

  /** The outbox marker: when the next delivery is due and where they go, or none. */
  async #mark(id: string, deliveries: readonly Delivery[] | undefined): Promise<void> {
    const { index } = this.#deps;
    const next = nextDeliveryAt(deliveries);
    await (next === undefined ? index.clearOutbox(id) : index.markOutbox(id, next, outboxHint(deliveries)));
  }

  #track(id: string, attempt: Promise<void>): Promise<void> {
    const tracked: Promise<void> = attempt.catch((error: unknown) => this.#logError(id, error)).finally(() => this.#attempts.delete(tracked));
    this.#attempts.add(tracked);
    return tracked;
  }

  #logDelivery(id: string, delivery: Delivery): void {
    this.#deps.log(
      JSON.stringify({
        event: 'notification',
        id,
        targetOrigin: originOf(delivery.target),
        eventId: delivery.eventId,
        state: delivery.state,
        attempts: delivery.attempts,
        error: delivery.lastError,
      }),
    );
  }

  #logError(id: string, error: unknown): void {
    this.#deps.log(JSON.stringify({ event: 'orchestration', id, step: 'delivery-error', code: (error as { code?: string }).code ?? 'InternalError' }));
  }
}

/** The deliveries an engine is built with (its `deliveries`): this dispatcher on the engine's parts, telling through `channels`. */
export function deliveriesOf(channels: DeliveryChannels): (parts: DeliveryParts) => EndDeliveries {
  return (parts) => new NotificationDispatcher({ ...parts, ...channels });
}
