/**
 * Every storage call runs within a time budget (`STORAGE_TIMEOUT_MS`,
 * Errors): a storage account that stalls answers 503 `StorageUnavailable` within the budget,
 * never a hang. The call is given an abort signal, so the request it made is dropped too
 * rather than left holding a socket; and it is raced against the budget, so the caller is
 * answered even if the SDK does not honour the signal at once (a stalled body stream).
 *
 * One budget object per store: `area` names the store in the error message.
 */
import { GatewayError } from '../errors';
import { isConditionFailure, statusCodeOf } from './blobText';
import { traceStorage } from '../telemetry';

export class StorageBudget {
  constructor(
    readonly timeoutMs: number,
    private readonly area: string,
  ) {}

  #unavailable(what: string, cause?: unknown): GatewayError {
    return new GatewayError('StorageUnavailable', `${this.area} failed to ${what}.`, { cause });
  }

  /** Runs one call within the budget; what is not already a GatewayError becomes StorageUnavailable. */
  async call<T>(what: string, run: (abortSignal: AbortSignal) => Promise<T>): Promise<T> {
    try {
      return await this.#raced(what, new AbortController(), run);
    } catch (error) {
      if (error instanceof GatewayError) throw error;
      throw this.#unavailable(what, error);
    }
  }

  /**
   * A conditional write: what it answered (truthy: the SDK's response), or undefined when its
   * condition failed (another writer was first, or the blob it was conditioned on is gone).
   */
  async conditional<T>(what: string, write: (abortSignal: AbortSignal) => Promise<T>): Promise<T | undefined> {
    try {
      return await this.#raced(what, new AbortController(), write);
    } catch (error) {
      if (isConditionFailure(error) || statusCodeOf(error) === 404) return undefined;
      if (error instanceof GatewayError) throw error;
      throw this.#unavailable(what, error);
    }
  }

  /**
   * Every item of a paged listing, each page fetched within the budget (a long listing may
   * take longer than one budget in all, but no single page may stall).
   */
  async *pages<Page>(what: string, list: (abortSignal: AbortSignal) => AsyncIterator<Page>): AsyncGenerator<Page> {
    const controller = new AbortController();
    const iterator = list(controller.signal);
    for (;;) {
      let next: IteratorResult<Page>;
      try {
        next = await this.#raced(what, controller, () => iterator.next());
      } catch (error) {
        if (error instanceof GatewayError) throw error;
        throw this.#unavailable(what, error);
      }
      if (next.done) return;
      yield next.value;
    }
  }

  async #raced<T>(what: string, controller: AbortController, run: (abortSignal: AbortSignal) => Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => {
        controller.abort();
        reject(new GatewayError('StorageUnavailable', `${this.area} did not ${what} within ${this.timeoutMs} ms.`));
      }, this.timeoutMs);
    });
    try {
      // Every storage call passes here: one span each (the store, and what it did).
      return await Promise.race([traceStorage(this.area, what, () => run(controller.signal)), expired]);
    } finally {
      clearTimeout(timer);
    }
  }
}

/**
 * Runs `run` again while it fails with StorageUnavailable, `attempts` times in all, each try
 * within its own budget (so the whole ends within `attempts` budgets, never a hang): for a
 * write that must not be lost to one transient failure and is safe to repeat (conditioned on
 * an ETag, or idempotent). No pause between tries: a failed try has already spent the SDK's
 * own retries, with their back-off, or the whole budget. Any other error is thrown at once.
 */
export async function withStorageAttempts<T>(attempts: number, run: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await run();
    } catch (error) {
      if (attempt >= attempts || !(error instanceof GatewayError) || error.code !== 'StorageUnavailable') throw error;
    }
  }
}
