/**
 * What callers see of orchestrations: the answer to a long-running start, the status document
 * (`orchestrations/{id}`, after Durable Functions' `createCheckStatusResponse`), and the
 * upstream-style polling answer (`operations/{id}`: 202 + Retry-After, then the result).
 */
import type { HttpResponseInit } from '@azure/functions';
import { errorStatusByCode, GatewayError, type ErrorCode } from '../errors';
import { waitingRetryAfterOf } from '../approvals';
import type { HeldOutcome, StartOutcome } from '../orchestration';
import type { OrchestrationState } from '../orchestration';
import { orchestrationLinks, statusDocument } from '../orchestration';
import { correlationHeader } from '../rules';
import { errorResponse, jsonResponse, upstreamResponse } from './answers';

export const orchestrationIdHeader = 'x-orchestration-id';

/** Seconds until the next poll, at least one: what `Retry-After` tells a caller. */
export function retryAfterSeconds(state: OrchestrationState, now: number): number {
  // A start waiting for approval has no poll: its pollers are told to come back in a while, not every second.
  return Math.max(1, Math.ceil(((state.poll?.nextPollAt ?? now + (waitingRetryAfterOf(state, now) ?? 0)) - now) / 1000));
}

function monitorHeaders(state: OrchestrationState, appBase: string, now: number): Record<string, string> {
  const links = orchestrationLinks(appBase, state.id);
  return {
    location: links.operationGetUri,
    'retry-after': String(retryAfterSeconds(state, now)),
    link: `<${links.statusQueryGetUri}>; rel="status", <${links.terminatePostUri}>; rel="terminate"`,
    [orchestrationIdHeader]: state.id,
  };
}

/**
 * The upstream's headers an ARM poller follows: core-lro's `inferLroMode` polls any
 * `Operation-Location`, `Azure-AsyncOperation` or `Location` of a long-running start's answer,
 * and reads `Retry-After` as its wait. The app never hands them on: a running start carries the
 * app's own, and a final one has nothing to follow (an upstream URL there would send the
 * caller's poller, and its token, past the app to the upstream).
 */
const upstreamPollingHeaders = new Set(['location', 'azure-asyncoperation', 'operation-location', 'retry-after']);

function withoutUpstreamPolling(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !upstreamPollingHeaders.has(name.toLowerCase())));
}

/**
 * The answer to a long-running start. Final: the upstream's status, body and headers, less its
 * polling headers. Running: the upstream's status and body, but `Location` points at the app,
 * so callers poll the app and never the upstream.
 */
export function startAnswer(outcome: StartOutcome | HeldOutcome, appBase: string, correlationId: string, now: number): HttpResponseInit {
  // Held for approval: accepted as a long-running start is, with nothing from the upstream to pass on.
  if (outcome.kind === 'waiting') return { status: 202, headers: { [correlationHeader]: correlationId, ...monitorHeaders(outcome.state, appBase, now) } };
  if (outcome.kind === 'final') {
    const answer = upstreamResponse(outcome.response, correlationId);
    return { ...answer, headers: { ...withoutUpstreamPolling(answer.headers as Record<string, string>), [orchestrationIdHeader]: outcome.state.id } };
  }
  if (outcome.kind === 'duplicate') {
    const { initial } = outcome.state;
    return {
      status: initial?.status ?? 202,
      headers: {
        [correlationHeader]: correlationId,
        ...(initial?.body === undefined ? {} : { 'content-type': 'application/json; charset=utf-8' }),
        ...monitorHeaders(outcome.state, appBase, now),
        'x-orchestration-duplicate': 'true',
      },
      body: initial?.body === undefined ? undefined : JSON.stringify(initial.body),
    };
  }
  const answer = upstreamResponse(outcome.response, correlationId);
  return { ...answer, headers: { ...withoutUpstreamPolling(answer.headers as Record<string, string>), ...monitorHeaders(outcome.state, appBase, now) } };
}

export function statusDocumentResponse(state: OrchestrationState, appBase: string, correlationId: string, now: number): HttpResponseInit {
  const running = ['Pending', 'Running'].includes(state.runtimeStatus);
  return jsonResponse(
    running ? 202 : 200,
    statusDocument(state, appBase),
    correlationId,
    running ? { 'retry-after': String(retryAfterSeconds(state, now)) } : {},
  );
}

/**
 * `GET operations/{id}` in the upstream's own protocol: 202 with `Retry-After` while running,
 * then the final status and body (the resource, or the upstream's error as it came).
 */
export function operationAnswer(state: OrchestrationState, appBase: string, correlationId: string, now: number): HttpResponseInit {
  if (['Pending', 'Running'].includes(state.runtimeStatus)) {
    return { status: 202, headers: { [correlationHeader]: correlationId, ...monitorHeaders(state, appBase, now) } };
  }
  // Terminated stays terminated, whatever a poll that raced the terminate may have read.
  if (state.output && state.runtimeStatus !== 'Terminated') {
    return {
      status: state.output.status,
      headers: {
        [correlationHeader]: correlationId,
        [orchestrationIdHeader]: state.id,
        ...(state.output.body === undefined ? {} : { 'content-type': 'application/json; charset=utf-8' }),
      },
      body: state.output.body === undefined ? undefined : JSON.stringify(state.output.body),
    };
  }
  const code = state.runtimeStatus === 'Terminated' ? 'OrchestrationTerminated' : (state.failure?.code ?? 'UpstreamBadResponse');
  const known = (code in errorStatusByCode ? code : 'UpstreamBadResponse') as ErrorCode;
  return errorResponse(new GatewayError(known, state.failure?.message ?? 'The operation did not complete.', { target: state.id }), correlationId);
}
