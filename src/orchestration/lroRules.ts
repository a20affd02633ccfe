/**
 * The ARM long-running-operation rules as pure functions (after core-lro's
 * `http/operation.ts`): how to follow an operation, what its status is, when it ends and how
 * long to wait between reads. Nothing here knows of HTTP clients or storage.
 *
 * References: the ARM async operation rules (Azure-AsyncOperation, then Location, then the
 * resource's provisioningState) and core-lro's reading of them.
 */

export type PollingMode = 'azure-async-operation' | 'location' | 'resource';
export type TerminalState = 'Succeeded' | 'Failed' | 'Canceled';

export interface UpstreamAnswer {
  status: number;
  /** Lower-case header names. */
  headers: Record<string, string>;
  body: unknown;
}

const terminalStates: readonly string[] = ['succeeded', 'failed', 'canceled', 'cancelled'];

/** `Succeeded`, `Failed`, `Canceled` ignoring case (`Cancelled` read as `Canceled`); else undefined. */
export function terminalStateOf(state: string | undefined): TerminalState | undefined {
  const lower = state?.toLowerCase();
  if (!lower || !terminalStates.includes(lower)) return undefined;
  if (lower === 'succeeded') return 'Succeeded';
  return lower === 'failed' ? 'Failed' : 'Canceled';
}

/** A resource's `properties.provisioningState`; none means `Succeeded` (ARM rule). */
export function provisioningStateOf(body: unknown): string {
  const state = (body as { properties?: { provisioningState?: unknown } } | null | undefined)?.properties?.provisioningState;
  return typeof state === 'string' && state !== '' ? state : 'Succeeded';
}

/**
 * How to follow an unfinished answer, preferring `Azure-AsyncOperation`, then `Location`, then
 * (for a PUT) the resource itself; undefined when the first answer is already final.
 */
export function pollingModeOf(method: string, answer: UpstreamAnswer): PollingMode | undefined {
  if (answer.status >= 300) return undefined;
  const asyncUrl = answer.headers['azure-asyncoperation'];
  const locationUrl = answer.headers.location;
  const put = method.toUpperCase() === 'PUT';
  const running = answer.status === 202 || (put && terminalStateOf(provisioningStateOf(answer.body)) === undefined);
  if (!running) return undefined;
  if (asyncUrl) return 'azure-async-operation';
  if (locationUrl) return 'location';
  return put ? 'resource' : undefined;
}

export function pollUrlOf(mode: PollingMode, answer: UpstreamAnswer, resourceUrl: string): string {
  if (mode === 'azure-async-operation') return answer.headers['azure-asyncoperation']!;
  if (mode === 'location') return answer.headers.location!;
  return resourceUrl;
}

/**
 * Where a POST's result is read once the Azure-AsyncOperation it follows succeeded: its first
 * answer's Location, as core-lro reads a POST (ARM's final-state-via: location; the status
 * body says only that it succeeded). None for other methods: a PUT's result is its resource,
 * read on its own URL; a DELETE has none.
 */
export function resultUrlOf(method: string, mode: PollingMode, answer: UpstreamAnswer): string | undefined {
  return mode === 'azure-async-operation' && method.toUpperCase() === 'POST' ? answer.headers.location || undefined : undefined;
}

/** The read that gives the result of an operation whose status read said it succeeded, if that read did not give it. */
export function finalReadOf(
  reading: { needsFinalGet: boolean },
  poll: { mode: PollingMode; resourceUrl: string; resultUrl?: string },
): { mode: PollingMode; url: string; method: string } | undefined {
  if (reading.needsFinalGet) return { mode: 'resource', url: poll.resourceUrl, method: 'GET' };
  // Read as a Location status: 202 while the result is not ready yet, 200 or 204 with it. A poll
  // that reads the result already (see readsResultOf) got it with this very read.
  return poll.resultUrl && !readsResultOf(poll) ? { mode: 'location', url: poll.resultUrl, method: 'POST' } : undefined;
}

/**
 * Whether a poll reads a POST's result: its status said Succeeded, but the read of the result
 * did not give it (202, not ready yet, or a failed read), so the poll moved to the result URL
 * as a Location status and the status URL is not read again. Its 202s then tell of a result
 * still being made, not of an operation still running.
 */
export function readsResultOf(poll: { mode: PollingMode; resultUrl?: string }): boolean {
  return poll.mode === 'location' && poll.resultUrl !== undefined;
}

/**
 * A first answer the operation cannot be followed from: accepted (202) with neither
 * `Azure-AsyncOperation` nor `Location`, on a method whose result is not the resource itself.
 * The upstream broke the protocol; the operation must not be reported as done.
 */
export function isUnfollowableAccept(method: string, answer: UpstreamAnswer): boolean {
  return answer.status === 202 && pollingModeOf(method, answer) === undefined;
}

/**
 * The URL a running poll answer moves the operation to, if it names one: the newest URL of the
 * mode being followed wins, as core-lro reads it from every poll answer (`getOperationLocation`).
 */
export function movedPollUrlOf(mode: PollingMode, answer: UpstreamAnswer): string | undefined {
  if (mode === 'azure-async-operation') return answer.headers['azure-asyncoperation'] || undefined;
  if (mode === 'location') return answer.headers.location || undefined;
  return undefined;
}

/** What one status read says. */
export type PollReading =
  | { kind: 'running'; state: string }
  | { kind: 'succeeded'; state: string; needsFinalGet: boolean }
  | { kind: 'failed'; state: TerminalState; status: number; error: unknown }
  /** The read itself failed (throttled, unavailable): try again later; the operation goes on. */
  | { kind: 'read-failed'; status: number };

/**
 * Statuses of a read that failed, not of the operation: throttling and 5xx, and a refusal of
 * the reader's token (401/403), which in passthrough mode is the reader's, not the starter's.
 */
const failedReadStatuses = new Set([401, 403, 408, 429, 500, 502, 503, 504]);

/** The long-running protocol has no redirects: a 3xx on a status read is the upstream's error. */
function redirectFailure(status: number): PollReading {
  return {
    kind: 'failed',
    state: 'Failed',
    status: 502,
    error: {
      error: { code: 'UpstreamBadResponse', message: `A status read of the operation answered ${status}; the long-running protocol has no redirects.` },
    },
  };
}

/**
 * Reads one poll answer. `Azure-AsyncOperation` carries the status in its body and answers 200
 * while readable, so any other status is a failed read (a 3xx is the upstream's error). `Location` answers 202 while running,
 * then the final answer; a 4xx there is the operation's error, a transient status is a failed
 * read. A resource read gives `provisioningState`.
 */
export function readPoll(mode: PollingMode, method: string, answer: UpstreamAnswer): PollReading {
  if (failedReadStatuses.has(answer.status)) return { kind: 'read-failed', status: answer.status };
  if (answer.status >= 300 && answer.status < 400) return redirectFailure(answer.status);
  if (mode === 'azure-async-operation') {
    if (answer.status !== 200) return { kind: 'read-failed', status: answer.status };
    const body = answer.body as { status?: unknown; error?: unknown } | null;
    const state = typeof body?.status === 'string' ? body.status : 'InProgress';
    const terminal = terminalStateOf(state);
    if (!terminal) return { kind: 'running', state };
    if (terminal === 'Succeeded') return { kind: 'succeeded', state: terminal, needsFinalGet: method.toUpperCase() === 'PUT' };
    return { kind: 'failed', state: terminal, status: answer.status, error: body };
  }
  if (mode === 'location') {
    if (answer.status === 202) return { kind: 'running', state: 'InProgress' };
    if (answer.status >= 400) return { kind: 'failed', state: 'Failed', status: answer.status, error: answer.body };
    // A PUT's result is the resource itself; a POST's is what Location answers.
    return { kind: 'succeeded', state: 'Succeeded', needsFinalGet: method.toUpperCase() === 'PUT' };
  }
  if (answer.status !== 200)
    return answer.status === 404 ? { kind: 'failed', state: 'Failed', status: 404, error: answer.body } : { kind: 'read-failed', status: answer.status };
  const state = provisioningStateOf(answer.body);
  const terminal = terminalStateOf(state);
  if (!terminal) return { kind: 'running', state };
  if (terminal === 'Succeeded') return { kind: 'succeeded', state: terminal, needsFinalGet: false };
  return { kind: 'failed', state: terminal, status: answer.status, error: answer.body };
}

export interface PollIntervalPolicy {
  /** Wait when the upstream names none (ARM: 60 s). */
  defaultMs: number;
  /** Never poll faster than this. */
  floorMs: number;
  /** Never wait longer than this, whatever is asked (a huge Retry-After once made a poller spin). */
  ceilingMs: number;
}

/**
 * The wait before the next read: `Retry-After` in whole seconds, within [floor, ceiling].
 * Anything else in the header (a date, a fraction, garbage, an overflow) is read as absent.
 */
export function pollIntervalMs(retryAfter: string | undefined, policy: PollIntervalPolicy): number {
  const text = retryAfter?.trim();
  const asked = text && /^\d{1,9}$/.test(text) ? Number(text) * 1000 : policy.defaultMs;
  return Math.min(policy.ceilingMs, Math.max(policy.floorMs, asked));
}
