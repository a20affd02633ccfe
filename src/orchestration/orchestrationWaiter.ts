/**
 * `gateway-wait`: hold an answer until the orchestration ends or the wait runs out (Durable
 * Functions' `waitForCompletionOrCreateCheckStatusResponse`).
 *
 * The waiters on one orchestration in this process share one watch, so a wait costs the same
 * storage reads whether one caller waits or eighty. The watch reads the document's status with
 * a HEAD (the blob metadata, see orchestrationStore.ts), never the input, which may be
 * megabytes; it reads the whole document only for a version a waiter is answered with: the one
 * it ended in, or the one standing when a wait runs out (and, once per version, a document an
 * older version wrote without its poll times in metadata). The watch reads storage, so the poll
 * that ends it may be made by any instance; when a poll is due and a waiter has a reader, the
 * watch makes it through the engine, which claims it first, so the upstream is never read
 * sooner than it asked nor twice for one due time. A waiter whose caller hung up leaves at
 * once, and the watch stops when no waiter is left.
 */
import type { OrchestrationEngine, PollReader } from './orchestrationEngine';
import { activeStatuses, type OrchestrationState } from './orchestrationState';
import type { OrchestrationStore, StoredState, StoredStatus } from './orchestrationStore';

export interface WaitOptions {
  /** When to stop waiting (ms since the epoch). */
  untilMs: number;
  reader?: PollReader;
  /** The caller hung up: the wait ends at once, without another storage read. */
  signal?: AbortSignal;
  /** The status the caller's check just read: a watch this wait starts takes it as its first look instead of reading it again. */
  firstLook?: StoredStatus;
}

export type WatchedEngine = Pick<OrchestrationEngine, 'advance'> & { store: Pick<OrchestrationStore, 'read' | 'readStatus'> };

/** Shortest and longest pause between two looks at the status. */
const minPauseMs = 100;
const maxPauseMs = 1000;
/** The upstream's answers that say a reader's token cannot pass: its waiter then only watches. */
const refusedStatuses = [401, 403];

/**
 * The poll times of a document written before they were kept in its metadata (an older
 * version): read from the document itself, once per version.
 */
function pollTimesOf(state: OrchestrationState | undefined): Partial<StoredStatus> {
  return {
    nextPollAt: state?.poll?.nextPollAt,
    claimedUntil: state?.poll?.claimedUntil,
    deadlineAt: state?.poll?.deadlineAt,
    lastReadStatus: state?.customStatus?.lastReadStatus,
  };
}

/** The pause between two looks, which a new waiter, a finished poll or the last waiter leaving cuts short. */
interface Sleep {
  wakeAt: number;
  timer?: NodeJS.Timeout;
  wake: () => void;
}

interface Waiter {
  untilMs: number;
  reader?: PollReader;
  settle(state: OrchestrationState | undefined): void;
  fail(error: unknown): void;
}

/** The one watch of one orchestration, while any waiter is on it. */
class Watch {
  readonly waiters = new Set<Waiter>();
  /** The last document read, for every waiter answered with that version. */
  #document: { etag: string; read: Promise<StoredState | undefined> } | undefined;
  /** Readers whose poll the engine declined at a version, with the time the poll had: not asked again until either grows. */
  readonly #declined = new Map<string, { etag: string; untilMs: number }>();
  /** The poll this watch is making, if any: it runs beside the looks, so no wait outlasts its time for it. */
  #polling: Promise<void> | undefined;
  /** The token of the poll just made, to tell at the next look whether the upstream refused it. */
  #lastPollToken: string | undefined;
  #sleep: Sleep | undefined;

  constructor(
    private readonly id: string,
    private readonly engine: WatchedEngine,
    private readonly now: () => number,
    /** Called as the last waiter leaves, in the same turn, so no new waiter joins a watch that has stopped (may be called twice). */
    private readonly onIdle: () => void,
  ) {}

  add(waiter: Waiter): void {
    this.waiters.add(waiter);
    // A wait shorter than the current pause moves the next look forward (no read now).
    if (this.#sleep && waiter.untilMs < this.#sleep.wakeAt) this.#pauseUntil(Math.max(this.now() + minPauseMs, waiter.untilMs));
  }

  /** A waiter leaves; with the last one the watch stops at once (a look on its way reads nothing more). */
  remove(waiter: Waiter): void {
    this.waiters.delete(waiter);
    if (this.waiters.size > 0) return;
    this.onIdle();
    this.#sleep?.wake();
  }

  /** The last document read, without reading: for a waiter whose caller hung up. */
  async lastRead(): Promise<OrchestrationState | undefined> {
    return (await this.#document?.read.catch(() => undefined))?.state;
  }

  async run(firstLook?: StoredStatus): Promise<void> {
    try {
      for (let known = firstLook; this.waiters.size > 0; known = undefined) await this.#turn(known);
    } catch (error) {
      this.#failAll(error);
    } finally {
      this.onIdle();
    }
  }

  #failAll(error: unknown): void {
    for (const waiter of this.waiters) waiter.fail(error);
    this.waiters.clear();
    this.#sleep?.wake();
  }

  async #turn(known?: StoredStatus): Promise<void> {
    const status = known ?? (await this.engine.store.readStatus(this.id));
    // Every caller may have hung up while the status was read: nothing more is read for them.
    if (this.waiters.size === 0) return;
    if (!status) return this.#settle([...this.waiters], undefined);
    if (!activeStatuses.includes(status.runtimeStatus)) return this.#settle([...this.waiters], await this.#documentAt(status.etag));
    if (status.runtimeStatus === 'Running' && status.nextPollAt === undefined) Object.assign(status, pollTimesOf(await this.#documentAt(status.etag)));
    this.#dropRefusedReader(status);
    const now = this.now();
    // Waits ending within the shortest pause are answered with this look, not one look each.
    const expired = [...this.waiters].filter((waiter) => waiter.untilMs <= now + minPauseMs);
    if (expired.length > 0) this.#settle(expired, await this.#documentAt(status.etag));
    if (this.waiters.size === 0) return;
    const poller = this.#polling ? undefined : this.#pollerFor(status, now);
    if (poller?.reader) this.#poll(poller.reader, poller.untilMs, status.etag);
    // Until the poll falls due, sleep to it; once due (another instance may hold it), look often.
    const untilPollMs = (status.nextPollAt ?? now) - now;
    const pauseMs = Math.min(maxPauseMs, Math.max(minPauseMs, untilPollMs > 0 ? untilPollMs : minPauseMs * 3));
    const firstEndMs = Math.min(...[...this.waiters].map((waiter) => waiter.untilMs));
    await new Promise<void>((resolve) => {
      const sleep: Sleep = {
        wakeAt: Infinity,
        wake: () => {
          clearTimeout(sleep.timer);
          resolve();
        },
      };
      this.#sleep = sleep;
      this.#pauseUntil(Math.max(now + minPauseMs, Math.min(now + pauseMs, firstEndMs)));
    });
    this.#sleep = undefined;
  }

  /**
   * Makes a due poll through the engine (which claims it first) with the reader's budget; the
   * next look follows at once. One the engine declines at this version (another caller's
   * operation in passthrough mode, too little time left) is not asked of that reader again
   * until the document changes or a waiter with more time could make it.
   */
  #poll(reader: PollReader, untilMs: number, etag: string): void {
    this.#polling = this.engine
      .advance(this.id, reader, untilMs)
      .then(
        (stepped) => {
          if (stepped) this.#lastPollToken = reader.token;
          else this.#declined.set(reader.token, { etag, untilMs });
        },
        (error: unknown) => this.#failAll(error),
      )
      .finally(() => {
        this.#polling = undefined;
        this.#sleep?.wake();
      });
  }

  #pauseUntil(wakeAt: number): void {
    const sleep = this.#sleep!;
    clearTimeout(sleep.timer);
    sleep.wakeAt = wakeAt;
    sleep.timer = setTimeout(sleep.wake, Math.max(0, wakeAt - this.now()));
  }

  /** Once the upstream refused a token, its waiters only watch rather than read with it again. */
  #dropRefusedReader(status: StoredStatus): void {
    const token = this.#lastPollToken;
    this.#lastPollToken = undefined;
    if (token === undefined || !refusedStatuses.includes(status.lastReadStatus ?? 0)) return;
    for (const waiter of this.waiters) if (waiter.reader?.token === token) waiter.reader = undefined;
  }

  /** The waiter whose reader makes a due poll: the one with the most time left, since the poll gets only the time its wait has. */
  #pollerFor(status: StoredStatus, now: number): Waiter | undefined {
    const pastDeadline = status.deadlineAt !== undefined && status.deadlineAt <= now;
    const pollDue = (status.nextPollAt ?? 0) <= now && (status.claimedUntil ?? 0) <= now;
    if (status.runtimeStatus === 'Running' && !pastDeadline && !pollDue) return undefined;
    const mayAsk = (waiter: Waiter) => {
      const declined = waiter.reader && this.#declined.get(waiter.reader.token);
      return waiter.reader !== undefined && (!declined || declined.etag !== status.etag || waiter.untilMs > declined.untilMs);
    };
    const candidates = [...this.waiters].filter(mayAsk);
    return candidates.sort((a, b) => b.untilMs - a.untilMs)[0];
  }

  /** The document at `etag` (or newer), read once for every waiter answered with it. */
  async #documentAt(etag: string): Promise<OrchestrationState | undefined> {
    if (this.#document?.etag !== etag) this.#document = { etag, read: this.engine.store.read(this.id) };
    return (await this.#document.read)?.state;
  }

  #settle(waiters: Waiter[], state: OrchestrationState | undefined): void {
    for (const waiter of waiters) {
      this.waiters.delete(waiter);
      waiter.settle(state);
    }
  }
}

/** The watches of this process, one per orchestration with waiters. */
export class OrchestrationWatches {
  readonly #watches = new Map<string, Watch>();

  constructor(
    private readonly engine: WatchedEngine,
    private readonly now: () => number = Date.now,
  ) {}

  /** How many orchestrations are watched now. */
  get watched(): number {
    return this.#watches.size;
  }

  /**
   * The document when it ended, or as it was when the wait ran out; undefined if there is none.
   * A wait whose caller hung up ends with the last document the watch read (or undefined).
   */
  wait(id: string, options: WaitOptions): Promise<OrchestrationState | undefined> {
    const { signal } = options;
    const existing = this.#watches.get(id);
    if (signal?.aborted) return existing?.lastRead() ?? Promise.resolve(undefined);
    const watch = existing ?? this.#startWatch(id);
    return new Promise<OrchestrationState | undefined>((resolve, reject) => {
      const onAbort = () => {
        watch.remove(waiter);
        void watch.lastRead().then(resolve);
      };
      const waiter: Waiter = {
        untilMs: options.untilMs,
        reader: options.reader,
        settle: (state) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(state);
        },
        fail: (error) => {
          signal?.removeEventListener('abort', onAbort);
          reject(error instanceof Error ? error : new Error(String(error)));
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      watch.add(waiter);
      if (!existing) void watch.run(options.firstLook);
    });
  }

  #startWatch(id: string): Watch {
    const watch: Watch = new Watch(id, this.engine, this.now, () => {
      if (this.#watches.get(id) === watch) this.#watches.delete(id);
    });
    this.#watches.set(id, watch);
    return watch;
  }
}
