/**
 * Small records in blob storage (one blob each, JSON unless said otherwise), changed only by
 * writes conditioned on their ETag, so of two instances changing one at once exactly one wins:
 *
 * - `create` writes only where there is none (`If-None-Match: *`): undefined when one exists;
 * - `replace` writes only over the version read (`If-Match`): undefined when another writer was
 *   first, or the record is gone;
 * - `update` reads, changes and writes conditionally, read again and tried again on a conflict;
 * - `remove` deletes, on an ETag when given (false when it changed or is gone).
 *
 * Each is one storage request (a read, one per try of `update`), within the store's time budget
 * (STORAGE_TIMEOUT_MS): a failure or a stall is a StorageUnavailable GatewayError. Several calls
 * share one budget with `within`, or run `on` the abort signal of a caller's own budget. Blob
 * metadata may go with a write, so that a listing or a HEAD (`head`) reads it without a download.
 *
 * Where a store's container is made: `before the first call` (once per process, one request),
 * `when missing` (when a create finds none: made, once for the calls finding it so at the same
 * time, and the create sent again), or by another store (a create then fails as a conflict).
 */
import type { BlockBlobClient } from '@azure/storage-blob';
import { downloadText, isConditionFailure, statusCodeOf } from './blobText';
import { containerMadeOnce, containerOf, type ContainerMaker, type ContainerSource } from './containerMadeOnce';
import type { StorageBudget } from './storageBudget';

/** A record as read: its value and the ETag of that version. */
export interface StoredRecord<T> {
  value: T;
  etag: string;
  /** Storage's time of its last change and of the answer: their difference is its age by storage's clock. */
  lastModified?: Date;
  servedAt?: Date;
}

/** What a HEAD tells of a record: its version and metadata, without its body. */
export interface RecordHead {
  etag: string;
  metadata: Record<string, string>;
}

/** How a record's value is held as a blob's text. */
export interface RecordFormat<T> {
  text(value: T): string;
  /** The value of a stored text (may throw on one it cannot read: the call then fails as storage's). */
  value(text: string): T;
  contentType?: string;
}

/** JSON, `indent` spaces deep (none: one line). */
export function jsonFormat<T>(indent?: number): RecordFormat<T> {
  return { text: (value) => JSON.stringify(value, null, indent), value: (text) => JSON.parse(text) as T, contentType: 'application/json' };
}

/** An empty blob whose name (and metadata) is all it says: a marker. */
export const markerFormat: RecordFormat<null> = { text: () => '', value: () => null };

export interface WriteOptions {
  /** Blob metadata written with the record (a listing and a HEAD read it). */
  metadata?: Record<string, string>;
  /** What the call does, as a StorageUnavailable error says it ('open a receiver circuit'). */
  what?: string;
}

/** The calls of a record store on one abort signal, which a budget holding them all bounds. */
export interface RecordCalls<T> {
  read(name: string): Promise<StoredRecord<T> | undefined>;
  head(name: string): Promise<RecordHead | undefined>;
  /** The new ETag, or undefined when the record exists. */
  create(name: string, value: T, options?: WriteOptions): Promise<string | undefined>;
  /** The new ETag, or undefined when the record is no longer at `etag` (changed or gone). */
  replace(name: string, value: T, etag: string, options?: WriteOptions): Promise<string | undefined>;
  /** Writes whatever is there (any failure, a missing container too, throws): the new ETag. */
  write(name: string, value: T, options?: WriteOptions): Promise<string>;
  /** Whether it removed the record: false when there was none, or (with `etag`) it was at another version. */
  remove(name: string, etag?: string): Promise<boolean>;
}

/** What `update` did: wrote the changed value, left the record as it was (the change said so), or found it changed by others at every try. */
export type Updated<T, S> = { kind: 'written'; value: T; etag: string } | { kind: 'unchanged'; current: S | undefined } | { kind: 'conflict' };

/** A versioned thing `updateConditionally` reads and writes: a record, or a store's own document. */
export interface Versioned<T, S extends { value: T; etag: string }> {
  read(): Promise<S | undefined>;
  /** Writes `value` on `etag` (undefined: only where there is none); the new ETag, or undefined when its condition failed. */
  write(value: T, etag: string | undefined): Promise<string | undefined>;
}

/**
 * Reads, changes and writes on the ETag read, `attempts` writes at most: a write whose condition
 * failed (another writer was first) reads again. `change` sees the current version (undefined:
 * none) and gives the next value, or undefined to leave it as it is; it may throw to refuse.
 */
export async function updateConditionally<T, S extends { value: T; etag: string }>(
  versioned: Versioned<T, S>,
  change: (current: S | undefined) => T | undefined | Promise<T | undefined>,
  attempts: number,
): Promise<Updated<T, S>> {
  for (let attempt = 0; attempt < attempts; attempt += 1) {
    const current = await versioned.read();
    const next = await change(current);
    if (next === undefined) return { kind: 'unchanged', current };
    const etag = await versioned.write(next, current?.etag);
    if (etag !== undefined) return { kind: 'written', value: next, etag };
  }
  return { kind: 'conflict' };
}

export interface RecordStoreOptions<T> {
  container: ContainerSource;
  budget: StorageBudget;
  /** Where the container is made (see above); absent: another store makes it. */
  makeContainer?: 'before the first call' | 'when missing';
  /** Default: JSON on one line. */
  format?: RecordFormat<T>;
}

export class RecordStore<T> {
  readonly #container: ContainerSource;
  readonly #budget: StorageBudget;
  readonly #format: RecordFormat<T>;
  readonly #made: ContainerMaker | undefined;
  readonly #makeContainer: RecordStoreOptions<T>['makeContainer'];

  constructor(options: RecordStoreOptions<T>) {
    this.#container = options.container;
    this.#budget = options.budget;
    this.#format = options.format ?? jsonFormat<T>();
    this.#makeContainer = options.makeContainer;
    this.#made = options.makeContainer && containerMadeOnce(options.container, options.budget);
  }

  /** The blob of a record (for a caller that names it by its blob, or reads it as a blob). */
  blob(name: string): BlockBlobClient {
    return containerOf(this.#container).getBlockBlobClient(name);
  }

  /** The record, or undefined when there is none. One download. */
  read(name: string, what = 'read a record'): Promise<StoredRecord<T> | undefined> {
    return this.within(what, (records) => records.read(name));
  }

  /** The record's ETag and metadata, or undefined when there is none. One HEAD. */
  head(name: string, what = 'read a record'): Promise<RecordHead | undefined> {
    return this.within(what, (records) => records.head(name));
  }

  /** Creates the record where there is none (`If-None-Match: *`): its ETag, or undefined when it exists. */
  create(name: string, value: T, options: WriteOptions = {}): Promise<string | undefined> {
    return this.within(options.what ?? 'write a record', (records) => records.create(name, value, options));
  }

  /** Replaces the record if it is still at `etag`: its new ETag, or undefined when another writer was first (or it is gone). */
  replace(name: string, value: T, etag: string, options: WriteOptions = {}): Promise<string | undefined> {
    return this.within(options.what ?? 'write a record', (records) => records.replace(name, value, etag, options));
  }

  /** Writes the record whatever is there (no condition): its new ETag. */
  write(name: string, value: T, options: WriteOptions = {}): Promise<string> {
    return this.within(options.what ?? 'write a record', (records) => records.write(name, value, options));
  }

  /** Removes the record (if still at `etag`, when given): whether it did. */
  remove(name: string, etag?: string, what = 'remove a record'): Promise<boolean> {
    return this.within(what, (records) => records.remove(name, etag));
  }

  /**
   * Reads, changes and writes the record (a create where there is none), `attempts` writes at
   * most: see updateConditionally. Each read and write is one call within its own budget.
   */
  update(
    name: string,
    change: (current: StoredRecord<T> | undefined) => T | undefined | Promise<T | undefined>,
    attempts: number,
    options: WriteOptions & { whatRead?: string } = {},
  ): Promise<Updated<T, StoredRecord<T>>> {
    const versioned: Versioned<T, StoredRecord<T>> = {
      read: () => this.read(name, options.whatRead),
      write: (value, etag) => (etag === undefined ? this.create(name, value, options) : this.replace(name, value, etag, options)),
    };
    return updateConditionally(versioned, change, attempts);
  }

  /** Runs several calls within one budget (`what` names them in its error). */
  async within<R>(what: string, run: (records: RecordCalls<T>) => Promise<R>): Promise<R> {
    if (this.#makeContainer === 'before the first call') await this.#made!();
    return this.#budget.call(what, (abortSignal) => run(this.on(abortSignal)));
  }

  /** The calls on `abortSignal`, for a caller whose own budget holds them (a container made `before the first call` is not made here). */
  on(abortSignal: AbortSignal): RecordCalls<T> {
    const format = this.#format;
    const blobHTTPHeaders = format.contentType ? { blobContentType: format.contentType } : undefined;
    const upload = (name: string, value: T, conditions: { ifMatch?: string; ifNoneMatch?: string } | undefined, metadata?: Record<string, string>) => {
      const text = format.text(value);
      return this.blob(name).upload(text, Buffer.byteLength(text), { conditions, metadata, blobHTTPHeaders, abortSignal });
    };
    /** The new ETag, undefined when its condition failed; `missing` when it answered 404. */
    const written = async (write: () => Promise<{ etag?: string }>): Promise<string | undefined | 'missing'> => {
      try {
        return (await write()).etag ?? '';
      } catch (error) {
        if (isConditionFailure(error)) return undefined;
        if (statusCodeOf(error) === 404) return 'missing';
        throw error;
      }
    };
    return {
      read: async (name) => {
        const found = await downloadText(this.blob(name), abortSignal);
        return found && { value: format.value(found.text), etag: found.etag, lastModified: found.lastModified, servedAt: found.servedAt };
      },
      head: async (name) => {
        try {
          const properties = await this.blob(name).getProperties({ abortSignal });
          return { etag: properties.etag ?? '', metadata: properties.metadata ?? {} };
        } catch (error) {
          if (statusCodeOf(error) === 404) return undefined;
          throw error;
        }
      },
      create: async (name, value, options = {}) => {
        const write = () => upload(name, value, { ifNoneMatch: '*' }, options.metadata);
        const first = await written(write);
        if (first !== 'missing') return first;
        // No container: made (when this store makes it) and the create sent again; else it fails as a conflict.
        if (this.#makeContainer !== 'when missing') return undefined;
        await this.#made!.again(abortSignal);
        const again = await written(write);
        if (again === 'missing') throw Object.assign(new Error('The container is still missing after its creation.'), { statusCode: 404 });
        return again;
      },
      replace: async (name, value, etag, options = {}) => {
        const outcome = await written(() => upload(name, value, { ifMatch: etag }, options.metadata));
        // Gone since it was read: another writer removed it.
        return outcome === 'missing' ? undefined : outcome;
      },
      write: async (name, value, options = {}) => (await upload(name, value, undefined, options.metadata)).etag ?? '',
      remove: async (name, etag) => {
        if (etag === undefined) return (await this.blob(name).deleteIfExists({ abortSignal })).succeeded;
        const outcome = await written(async () => {
          await this.blob(name).delete({ conditions: { ifMatch: etag }, abortSignal });
          return {};
        });
        return outcome !== undefined && outcome !== 'missing';
      },
    };
  }
}
