/**
 * `gateway-wait`: hold an answer until the orchestration ends or the wait runs out (Durable
 * Functions' `waitForCompletionOrCreateCheckStatusResponse`). The waiter reads the document
 * from storage, so the poll that ends it may be made by any instance; when a poll is due and
 * the waiter has a reader, it makes the poll itself through the engine, which claims it first,
 * so the upstream is never read sooner than it asked nor twice for one due time.
 */
import type { OrchestrationEngine, PollReader } from './orchestrationEngine';
import { isActive, type OrchestrationState } from './orchestrationState';

export interface WaitOptions {
  /** When to stop waiting (ms since the epoch). */
  untilMs: number;
  reader?: PollReader;
  now: () => number;
  sleep?: (ms: number) => Promise<void>;
}

/** Shortest and longest pause between two looks at the document. */
const minPauseMs = 100;
const maxPauseMs = 1000;

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * The document when it ended, or as it was when the wait ran out; undefined if there is none.
 * The polls it makes get only the time left; and once the upstream refuses the reader's token
 * (401/403), the waiter only watches, rather than reading again with a token that cannot pass.
 */
export async function waitForEnd(engine: Pick<OrchestrationEngine, 'get' | 'advance'>, id: string, options: WaitOptions): Promise<OrchestrationState | undefined> {
  const sleep = options.sleep ?? defaultSleep;
  let reader = options.reader;
  for (;;) {
    const state = await engine.get(id);
    if (!state || !isActive(state)) return state;
    const now = options.now();
    const remainingMs = options.untilMs - now;
    if (remainingMs <= 0) return state;
    if (reader && (await engine.advance(id, reader, options.untilMs))) {
      const after = await engine.get(id);
      if (after && isActive(after) && [401, 403].includes(after.customStatus?.lastReadStatus ?? 0)) reader = undefined;
      continue;
    }
    // Until the poll falls due, sleep to it; once due (another instance may hold it), look often.
    const untilPollMs = (state.poll?.nextPollAt ?? now) - now;
    const pauseMs = Math.min(maxPauseMs, Math.max(minPauseMs, untilPollMs > 0 ? untilPollMs : minPauseMs * 3));
    await sleep(Math.min(pauseMs, remainingMs));
  }
}
