/**
 * A call of one of the app's own routes, as every way in gives it (the HTTP adapter, a chat
 * command): who calls and with what rights, where its links point, and what it asked, with
 * nothing of the transport it came by.
 */
import type { CallerIdentity } from '../callers';
import type { Services } from '../services';
import type { CallRecordDraft } from './callLog';

export type HeaderGetter = { get(name: string): string | null };

export interface RouteCall {
  services: Services;
  caller: CallerIdentity;
  correlationId: string;
  /** When the request arrived (ms since the epoch): waits are counted from it. */
  startedMs: number;
  /** `https://host/api`: the base the app's links are built on. */
  appBase: string;
  /** The route's (or the chat command's) name, as refusals and the access policy name it. */
  routeName: string;
  /**
   * No rule allows the route to the caller, which reaches it only as a starter (or an approver):
   * the handler answers on the caller's own orchestrations only.
   */
  starterOnly: boolean;
  /** The query as the caller sent it, every pair kept. */
  query: URLSearchParams;
  /** The request's headers: a continuation token, the caller's `Authorization` (its own upstream token in passthrough mode), those forwarded upstream. */
  headers: HeaderGetter;
  /** Aborted when the caller hangs up: a held wait ends. */
  signal?: AbortSignal;
  /** What the call record says (callLog.ts), filled in as the call goes. */
  record: CallRecordDraft;
  /** The invocation's log: a line of a call made on the caller's behalf (a restart's replayed operation) goes there. */
  log: (line: string) => void;
}
