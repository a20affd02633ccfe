/**
 * What the poller reads instead of every stored document, so a run costs what is due, not
 * what is stored (finished orchestrations, kept for a week, never enter it):
 *
 * - `keys/{requestKey}`: one per active orchestration, created with `If-None-Match: *` when it
 *   starts (so a duplicate start finds it) and deleted when it ends. Its content and metadata
 *   name the orchestration; its metadata says when it next needs the poller (`startedat`,
 *   `nextpollat`, `deadlineat`). Listing `keys/` is listing what is running.
 * - `outbox/{id}`: an ended orchestration with notifications still to deliver, due at `dueat`;
 *   `fresh` and `origins` say whether one awaits its first attempt and where they go, so a run
 *   orders them and skips a receiver that is failing without reading the document.
 * - `expiry/{yyyyMMddHH}/{purgeAfter}-{id}`: an ended orchestration to purge after `purgeAfter`,
 *   in hourly buckets, so a run reads only the bucket of the hour it runs in (and the one
 *   before), oldest first, never the week of markers not yet due.
 * - `janitor.json`: the cursor of the pass that reconciles every document with the index now
 *   and then (a crash between two writes, or documents written before the index existed).
 *
 * Every entry is a hint that the engine checks against the document itself before acting, so a
 * stale entry costs a read, never a wrong step; each is written idempotently.
 */
import type { ContainerClient } from '@azure/storage-blob';
import { downloadText } from '../storage';
import { RecordStore } from '../storage';
import type { StorageBudget } from '../storage';
import type { OutboxHint } from './outbox';

export interface KeySchedule {
  startedAt: number;
  nextPollAt?: number;
  deadlineAt?: number;
  /**
   * When a change of a held start began that makes it due (a decision): while that change may
   * still be landing, the poller looks again soon instead of setting the key back to the start's
   * own schedule (see HeldStarts.change).
   */
  changedAt?: number;
}

export interface ActiveEntry extends Partial<KeySchedule> {
  requestKey: string;
  id: string;
  /** The key's ETag as listed: a poll reschedules or frees the key with it, without reading it first. */
  etag?: string;
}

export interface ExpiryEntry {
  id: string;
  /** The marker's own name, to delete it. */
  marker: string;
  purgeAfter: number;
}

export interface OutboxEntry {
  id: string;
  dueAt: number;
  /** Absent on a marker written without it (the janitor's, or an older version's). */
  hint?: OutboxHint;
}

const keyPrefix = 'keys/';
const outboxPrefix = 'outbox/';
const expiryPrefix = 'expiry/';
const janitorBlob = 'janitor.json';

function optionalNumber(text: string | undefined): number | undefined {
  const value = text ? Number(text) : NaN;
  return Number.isFinite(value) ? value : undefined;
}

function scheduleMetadata(id: string, schedule: KeySchedule): Record<string, string> {
  return {
    id,
    startedat: String(schedule.startedAt),
    nextpollat: String(schedule.nextPollAt ?? ''),
    deadlineat: String(schedule.deadlineAt ?? ''),
    ...(schedule.changedAt === undefined ? {} : { changedat: String(schedule.changedAt) }),
  };
}

/** `2026112310` for any time in that UTC hour. */
function hourBucket(ms: number): string {
  return new Date(ms).toISOString().slice(0, 13).replace(/[-T]/g, '');
}

export function expiryMarkerName(id: string, purgeAfter: number): string {
  return `${expiryPrefix}${hourBucket(purgeAfter)}/${String(purgeAfter).padStart(15, '0')}-${id}`;
}

/** The janitor's cursor (janitor.json). */
interface JanitorCursor {
  marker?: string;
  nextRunAt?: number;
}

export class OrchestrationIndex {
  /** The janitor's cursor, in the container the orchestration store makes. */
  readonly #janitor: RecordStore<JanitorCursor>;

  constructor(
    private readonly container: ContainerClient,
    private readonly budget: StorageBudget,
  ) {
    this.#janitor = new RecordStore({ container, budget });
  }

  #key(requestKey: string) {
    return this.container.getBlockBlobClient(`${keyPrefix}${requestKey}`);
  }

  /** Takes a request key for `id`: its ETag, or undefined if another orchestration holds it. */
  async claimKey(requestKey: string, id: string, schedule: KeySchedule): Promise<string | undefined> {
    const written = await this.budget.conditional('claim a request key', (abortSignal) =>
      this.#key(requestKey).upload(id, Buffer.byteLength(id), { conditions: { ifNoneMatch: '*' }, metadata: scheduleMetadata(id, schedule), abortSignal }),
    );
    return written && (written.etag ?? '');
  }

  /**
   * Who holds a request key, with the ETag to take it over and how long ago it was written, by
   * storage's own clock (an instance's clock may run ahead of or behind storage's).
   */
  async keyHolder(requestKey: string): Promise<{ id: string; etag: string; ageMs: number } | undefined> {
    const blob = await this.budget.call('read a request key', (abortSignal) => downloadText(this.#key(requestKey), abortSignal));
    if (!blob) return undefined;
    const writtenAt = blob.lastModified?.getTime() ?? 0;
    return { id: blob.text, etag: blob.etag, ageMs: (blob.servedAt?.getTime() ?? Date.now()) - writtenAt };
  }

  /** Moves a request key from an orchestration that ended to `id`: its new ETag, or undefined if it changed meanwhile. */
  async takeOverKey(requestKey: string, id: string, etag: string, schedule: KeySchedule): Promise<string | undefined> {
    const written = await this.budget.conditional('take over a request key', (abortSignal) =>
      this.#key(requestKey).upload(id, Buffer.byteLength(id), { conditions: { ifMatch: etag }, metadata: scheduleMetadata(id, schedule), abortSignal }),
    );
    return written && (written.etag ?? '');
  }

  /**
   * Records when `id` next needs the poller, if it still holds the key. With the key's ETag (as
   * a start or a listing has it) one write, and a read and a write if it changed since; without,
   * a read first, so another holder's key is never changed. Whether it was written.
   */
  async scheduleKey(requestKey: string, id: string, schedule: KeySchedule, etag?: string): Promise<boolean> {
    const write = (ifMatch: string) =>
      this.budget.conditional('schedule a request key', (abortSignal) =>
        this.#key(requestKey).setMetadata(scheduleMetadata(id, schedule), { conditions: { ifMatch }, abortSignal }),
      );
    if (etag !== undefined && (await write(etag))) return true;
    const holder = await this.keyHolder(requestKey);
    if (holder?.id !== id) return false;
    return (await write(holder.etag)) !== undefined;
  }

  /**
   * Frees a request key if `id` still holds it: with the key's ETag one delete (a read first
   * if it changed since), without it a read first.
   */
  async releaseKey(requestKey: string, id: string, etag?: string): Promise<void> {
    const remove = (ifMatch: string) =>
      this.budget.conditional('release a request key', (abortSignal) => this.#key(requestKey).deleteIfExists({ conditions: { ifMatch }, abortSignal }));
    if (etag !== undefined && (await remove(etag))?.succeeded) return;
    const holder = await this.keyHolder(requestKey);
    if (holder?.id !== id) return;
    await remove(holder.etag);
  }

  /** Every active orchestration, from the keys' metadata alone. */
  async listActive(): Promise<ActiveEntry[]> {
    const entries: ActiveEntry[] = [];
    const pages = this.budget.pages('list active orchestrations', (abortSignal) =>
      this.container.listBlobsFlat({ prefix: keyPrefix, includeMetadata: true, abortSignal }).byPage({ maxPageSize: 5000 }),
    );
    for await (const page of pages) {
      for (const blob of page.segment.blobItems) {
        const metadata = blob.metadata ?? {};
        entries.push({
          requestKey: blob.name.slice(keyPrefix.length),
          // A key written before its metadata was kept names its holder in its content only.
          id: metadata.id ?? '',
          etag: blob.properties.etag,
          startedAt: optionalNumber(metadata.startedat) ?? blob.properties.createdOn?.getTime(),
          nextPollAt: optionalNumber(metadata.nextpollat),
          deadlineAt: optionalNumber(metadata.deadlineat),
          changedAt: optionalNumber(metadata.changedat),
        });
      }
    }
    return entries;
  }

  async markOutbox(id: string, dueAt: number, hint?: OutboxHint): Promise<void> {
    const metadata: Record<string, string> = { dueat: String(dueAt) };
    // Origins are ASCII as URL writes them (punycode hosts), as metadata must be; never a path.
    if (hint) Object.assign(metadata, { fresh: hint.fresh ? '1' : '0', origins: hint.origins.join(' ') });
    await this.budget.call('mark an outbox', (abortSignal) =>
      this.container.getBlockBlobClient(`${outboxPrefix}${id}`).upload('', 0, { metadata, abortSignal }),
    );
  }

  async clearOutbox(id: string): Promise<void> {
    await this.budget.call('clear an outbox', (abortSignal) => this.container.getBlockBlobClient(`${outboxPrefix}${id}`).deleteIfExists({ abortSignal }));
  }

  /** Ended orchestrations with deliveries due by `now`. */
  async dueOutboxes(now: number): Promise<OutboxEntry[]> {
    const due: OutboxEntry[] = [];
    const pages = this.budget.pages('list outboxes', (abortSignal) =>
      this.container.listBlobsFlat({ prefix: outboxPrefix, includeMetadata: true, abortSignal }).byPage({ maxPageSize: 5000 }),
    );
    for await (const page of pages) {
      for (const blob of page.segment.blobItems) {
        const metadata = blob.metadata ?? {};
        const dueAt = optionalNumber(metadata.dueat) ?? 0;
        if (dueAt > now) continue;
        const hint =
          metadata.fresh === undefined || metadata.origins === undefined
            ? undefined
            : { fresh: metadata.fresh === '1', origins: metadata.origins.split(' ').filter(Boolean) };
        due.push({ id: blob.name.slice(outboxPrefix.length), dueAt, hint });
      }
    }
    return due;
  }

  async markExpiry(id: string, purgeAfter: number): Promise<void> {
    await this.budget.call('mark an expiry', (abortSignal) =>
      this.container.getBlockBlobClient(expiryMarkerName(id, purgeAfter)).upload('', 0, { abortSignal }),
    );
  }

  async clearExpiry(marker: string): Promise<void> {
    await this.budget.call('clear an expiry', (abortSignal) => this.container.getBlockBlobClient(marker).deleteIfExists({ abortSignal }));
  }

  /**
   * Up to `limit` ended orchestrations due for purging by `now`, oldest first. Only the previous
   * and the current hour's buckets are read: runs come every few seconds, so a marker falls due
   * while its bucket is one of those two; after a longer pause the janitor purges what is past
   * retention. Later buckets, where almost every marker waits, are never listed.
   */
  async expired(now: number, limit: number): Promise<ExpiryEntry[]> {
    const due: ExpiryEntry[] = [];
    for (const hour of [now - 3600_000, now]) {
      const pages = this.budget.pages('list expiries', (abortSignal) =>
        this.container.listBlobsFlat({ prefix: `${expiryPrefix}${hourBucket(hour)}/`, abortSignal }).byPage({ maxPageSize: Math.min(5000, limit) }),
      );
      for await (const page of pages) {
        for (const blob of page.segment.blobItems) {
          const match = /\/(\d+)-([^/]+)$/.exec(blob.name);
          const purgeAfter = Number(match?.[1]);
          if (!match || purgeAfter > now || due.length >= limit) return due;
          due.push({ id: match[2]!, marker: blob.name, purgeAfter });
        }
      }
    }
    return due;
  }

  /**
   * Takes the janitor's turn if it is due: the listing marker to go on from, and the ETag to
   * record progress with; undefined when it is not due or another instance took it.
   */
  async claimJanitor(now: number, holdMs: number): Promise<{ marker?: string; etag: string } | undefined> {
    const stored = await this.#janitor.read(janitorBlob, 'read the janitor cursor');
    const cursor = stored?.value ?? {};
    if ((cursor.nextRunAt ?? 0) > now) return undefined;
    const claimed = { marker: cursor.marker, nextRunAt: now + holdMs };
    const options = { what: 'claim the janitor' };
    const etag = stored ? await this.#janitor.replace(janitorBlob, claimed, stored.etag, options) : await this.#janitor.create(janitorBlob, claimed, options);
    return etag === undefined ? undefined : { marker: cursor.marker, etag };
  }

  /** Records where the janitor got to, and when it runs next. */
  async saveJanitor(marker: string | undefined, nextRunAt: number, etag: string): Promise<void> {
    await this.#janitor.replace(janitorBlob, { marker, nextRunAt }, etag, { what: 'save the janitor cursor' });
  }
}
