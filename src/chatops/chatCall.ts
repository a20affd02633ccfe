/**
 * One verified chat command on its way through the app: who sent it (a caller as ACCESS_POLICY
 * names it), the time it must be answered by, and where its end goes.
 */
import type { CallerIdentity } from '../callers';
import type { Services } from '../services';

export interface ChatCall {
  services: Services;
  /** `slack:<team>/<user>` or `teams:<tenant>/<AAD object id>`. */
  caller: CallerIdentity;
  correlationId: string;
  /** The app's base URL as the platform reached it: links and the synthetic calls are built on it. */
  appBase: string;
  /** When the answer must be ready (ms since the epoch), well inside the platform's limit. */
  answerBy: number;
  /** The outbox target of the end of an operation this command starts (see chatNotifier.ts), if any. */
  endTarget?: string;
  /** What the acknowledgement says about where the end will be posted. */
  endNote: string;
  log: (line: string) => void;
}

/** Resolves after `ms`, with `value`. */
export function after<T>(ms: number, value: T): Promise<T> {
  return new Promise((resolve) => setTimeout(() => resolve(value), Math.max(0, ms)).unref?.());
}
