/**
 * The stored document of one orchestration, in the spirit of Durable Functions' status
 * (`runtimeStatus`, `input`, `output`, `customStatus`, times), plus what the poller needs.
 * It is plain JSON, so any instance can continue it (core-lro's serialisable state).
 * Secrets never enter it: `input.body` is redacted before it is built.
 */
import type { ApprovalStatus } from './approvalStatus';
import type { PollingMode } from './lroRules';
import type { Delivery } from './outbox';
import type { TraceCarrier } from '../telemetry';
import type { UpstreamIds } from '../telemetry';

export type RuntimeStatus = 'Pending' | 'Running' | 'Completed' | 'Failed' | 'Terminated';

export const activeStatuses: readonly RuntimeStatus[] = ['Pending', 'Running'];

export interface OrchestrationState {
  id: string;
  /** The operationId of the catalogue entry. */
  name: string;
  runtimeStatus: RuntimeStatus;
  input: {
    method: string;
    /** The upstream path, without base or query. */
    path: string;
    query: [string, string][];
    /** The request body, secrets redacted. */
    body?: unknown;
  };
  /** Identifies the same start (method, path, query and body) to refuse duplicates. */
  requestKey: string;
  /** A digest of the caller's token in passthrough mode: only that caller's reads advance it. */
  actor?: string;
  /** The caller that started it (`principal:…`, `key:…`): with ACCESS_POLICY, only it and admins see it. */
  startedBy?: string;
  /** The upstream's first answer, as the caller got it, with the request ids it carried. */
  initial?: { status: number; body?: unknown; upstreamIds?: UpstreamIds };
  /** The final answer: the resource, or the upstream's error. */
  output?: { status: number; body?: unknown };
  /**
   * `approval`: the approval a held start needs (approvalStatus.ts: the record the document
   * carries; src/approvals says what it means). It waits, Pending, with no upstream call until approved.
   */
  customStatus?: { upstreamState: string; lastReadStatus?: number; lastPolledTime?: string; message?: string; approval?: ApprovalStatus };
  createdTime: string;
  lastUpdatedTime: string;
  poll?: {
    mode: PollingMode;
    /** Upstream URL read each poll; the origin is checked before every read. */
    url: string;
    /** The resource URL, for a PUT's final GET. */
    resourceUrl: string;
    /** A POST followed through Azure-AsyncOperation: its first answer's Location, where its result is read (see resultUrlOf). */
    resultUrl?: string;
    nextPollAt: number;
    /** Until when an instance holds this poll (a claim that lapses if the instance dies). */
    claimedUntil?: number;
    pollCount: number;
    failedReads: number;
    deadlineAt: number;
  };
  failure?: { code: string; message: string };
  /** The app's base URL as the starter reached it: the links and the `source` of notifications. */
  appBase?: string;
  /** Where the starter asked to be told of the end (`x-gateway-notify`). */
  notifyTargets?: string[];
  /** When it ended (Completed, Failed or Terminated): the notification's time, and where retention counts from. */
  endedTime?: string;
  /** The start's trace context, when telemetry is exported: each poll and notification links to it. */
  traceContext?: TraceCarrier;
  /** The outbox: one delivery per target, opened when it ends. */
  deliveries?: Delivery[];
  /**
   * A start that waits for approval (customStatus.approval): what its send needs once approved,
   * held instead of sent. No secret: a start whose body holds a secret field cannot wait.
   * `sendingSince`: an instance claimed the send (only one can); `sendBy`: an approved start not
   * sent by then ends.
   */
  heldStart?: { url: string; headers: Record<string, string>; bodyText?: string; sendingSince?: number; sendBy?: number };
  /** The ended orchestration this one is a restart of (`POST orchestrations/{id}/restart`). */
  restartedFrom?: string;
  /** The orchestration this ended one was restarted as: set once, by a conditional write, so one restart wins. */
  restartedAs?: string;
}

export function isActive(state: OrchestrationState): boolean {
  return activeStatuses.includes(state.runtimeStatus);
}
