/**
 * The async context, let go of whenever no work within it is in flight, where holding it costs
 * every promise. On Node 20 and 22 (without `--experimental-async-context-frame`) an
 * AsyncLocalStorage, once entered, runs a hook for every promise and async resource of the
 * process, and V8 turns off its fast `await`, until the storage is disabled: a GET's handler
 * cost a fifth more for it, traced or not. Incoming calls hand their trace on by hand
 * (src/telemetry/spans.ts callTraceOf), so the context is entered only by work that cannot (a
 * poll, a start's storage calls, the batch processor's export): counted here, and the storage
 * disabled when the last of them settles. A later `with` enables it again. On Node 24 the
 * context is a frame each promise carries at no cost, and nothing is counted.
 *
 * Not covered: work started within a scope and left to run after it settled (`void work()`).
 * Once nothing counted is in flight it sees no context: its upstream attempts start traces of
 * their own and its storage calls make no spans. The shared orchestration watch is such work;
 * the calls that wait on it keep their own spans.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';

/** Whether this runtime's AsyncLocalStorage is the one built on async hooks (it propagates by hook). */
export function contextRunsHooks(): boolean {
  return typeof (AsyncLocalStorage.prototype as { _propagate?: unknown })._propagate === 'function';
}

export class CountedContextManager extends AsyncLocalStorageContextManager {
  #open = 0;

  constructor(private readonly letGo = contextRunsHooks()) {
    super();
  }

  override with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    context: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    if (!this.letGo) return super.with(context, fn, thisArg, ...args);
    this.#open += 1;
    let result: ReturnType<F>;
    try {
      result = super.with(context, fn, thisArg, ...args);
    } catch (error) {
      this.#settled();
      throw error;
    }
    const pending = result as { then?: unknown } | undefined;
    if (typeof pending?.then !== 'function') {
      this.#settled();
      return result;
    }
    // The work within runs on after `with` returns, until its promise settles. The caller gets a
    // promise of the same outcome: a handler on the work's own would count its rejection as
    // handled, and one nobody awaits would no longer be reported.
    return (result as PromiseLike<unknown>).then(
      (value) => {
        this.#settled();
        return value;
      },
      (error: unknown) => {
        this.#settled();
        throw error;
      },
    ) as ReturnType<F>;
  }

  /** Work within the context that is still in flight (for tests). */
  get open(): number {
    return this.#open;
  }

  readonly #settled = (): void => {
    this.#open -= 1;
    if (this.#open === 0) this.disable();
  };
}
