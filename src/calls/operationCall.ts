/**
 * The one pipeline of a documented operation's call, whichever way it came (an HTTP request, a
 * chat command, a restart, a bulk restart): the caller's grant, validation, the scopes, the
 * caller's share, the start of a long-running one (or its hold for approval), the send, and
 * the answer (with `nextLink` pointing at the app, or every page merged when asked). A call is
 * plain data (OperationCall); nothing here knows the transport it came by.
 */
import type { HttpResponseInit } from '@azure/functions';
import type { CallKind } from '../access';
import type { CallerIdentity } from '../callers';
import { GatewayError, toGatewayError } from '../errors';
import type { HeldOutcome, StartOutcome, StartRequest } from '../orchestration';
import type { OrchestrationState } from '../orchestration';
import { assertScopeAllowed } from '../rules';
import type { Services } from '../services';
import { fillPath, resolvePathTemplate, type OperationSpec } from '../spec';
import { inCallTrace, type CallTrace } from '../telemetry';
import { collectPagesText, isListPage, listPageText, rewriteNextLink, type FetchedPage, type ListPage } from '../upstream';
import { actorOf } from '../upstream';
import { refuseRedirect, type UpstreamResponse } from '../upstream';
import { parseUpstreamJson } from '../upstream';
import { upstreamResponse } from './answers';
import { assertWithinGrant, grantFor, refusalCodes, takeCallerRate } from './authorization';
import { assertBodyWithinScopes } from './bodyReferences';
import type { CallRecordDraft } from './callLog';
import { longestWaitSeconds, takeWaitSlot, waitForEnd } from './gatewayWait';
import { notifyTargetsOf } from './notifyTarget';
import { operationAnswer, startAnswer } from './orchestrationAnswers';
import { validateOperationCall } from './operationRequest';
import type { PreparedCall } from './preparedCall';
import { startOrHold } from './startOrHold';

export type { PreparedCall } from './preparedCall';

/** Caller headers that carry meaning for the upstream and are forwarded as they are. */
export const forwardedCallerHeaders = ['if-match', 'if-none-match', 'accept-language'] as const;

/** One call of a documented operation, as plain data. */
export interface OperationCall {
  operation: OperationSpec;
  caller: CallerIdentity;
  /** The route values the operation's path takes. */
  params: Record<string, string>;
  /** The query as the caller sent it, every pair kept: a repeated parameter is refused, not merged. */
  query: URLSearchParams;
  /** The body's declared type, and its bytes as received, read only once the caller's grant is checked; none for a call without one. */
  body?: { contentType: string | null; read(): Promise<Uint8Array> };
  /** The caller's `Authorization`: its own upstream token in passthrough mode. */
  authorization?: string;
  /** The caller's headers the upstream understands (forwardedCallerHeaders), as sent. */
  forwardedHeaders?: Partial<Record<(typeof forwardedCallerHeaders)[number], string>>;
  /** `x-gateway-notify`: where to tell of a long-running start's end. */
  notify?: string;
  /** Where the end of a start also goes, beside `notify` (a chat command's reply). */
  endTarget?: string;
  correlationId: string;
  /** When the call arrived (ms since the epoch): a `gateway-wait` and a merge of pages count from it. */
  startedMs: number;
  /** The app's base URL, given the call's upstream path: the links a caller is handed are built on it. */
  appBaseFor(targetPath: string): string;
  /** Aborted when the caller hangs up: a held wait ends. */
  signal?: AbortSignal;
  /** The incoming call's trace, handed to its upstream requests. */
  callTrace?: CallTrace;
  /** A restart: the id chosen for the new orchestration (the original links to it first) and the original's. */
  restart?: { id: string; restartedFrom: string };
  /** Told a start's id once it is stored, before the upstream answers (a chat command answers with it). */
  onStored?(state: OrchestrationState): void;
  /** What the call record says (callLog.ts), filled in as the call goes. */
  record: CallRecordDraft;
}

export interface OperationResult {
  response: HttpResponseInit;
  /** The upstream's answer, when one came. */
  upstream?: UpstreamResponse;
  /** A long-running start's outcome: started, joined, held for approval, or answered at once. */
  outcome?: StartOutcome | HeldOutcome;
}

/**
 * Runs one call of a documented operation. A refusal or failure is thrown as a GatewayError
 * (the way in answers it in the documented shape); the record says what was decided.
 */
export async function runOperation(services: Services, call: OperationCall): Promise<OperationResult> {
  const { operation, record } = call;
  record.operation = operation.operationId;
  record.target = '(invalid)';
  let prepared: PreparedCall | undefined;
  try {
    prepared = await prepareCall(services, call);
    record.decision = 'allowed';
    const appBase = call.appBaseFor(prepared.targetPath);
    // Only the certificate download reads the guard, and with it storage (built on first use).
    const downloadGuard = operation.rateLimitedPerEnvironment ? services.certificates.downloadGuard : undefined;
    const ready = prepared;
    let upstream: UpstreamResponse | undefined;
    const send = async () => {
      await downloadGuard?.acquire(ready.call.params);
      upstream = record.upstream = await sendPrepared(ready);
      await downloadGuard?.observe(ready.call.params, upstream);
      return refuseRedirect(upstream);
    };
    // Upstream requests take the call's trace by hand; what also calls storage (a start and its
    // wait, the download guard) runs within it, for the storage calls' spans.
    if (!operation.longRunning) {
      const answer = downloadGuard ? await inCallTrace(call.callTrace, send) : await send();
      return { response: await shapeResponse(ready, answer, appBase), upstream };
    }
    // A held wait is counted before the upstream is called: a refused one sends nothing.
    const { waitSeconds } = ready.call;
    const releaseWait = waitSeconds ? takeWaitSlot(services, call.caller, call.startedMs + waitSeconds * 1000) : undefined;
    try {
      return await inCallTrace(call.callTrace, async () => {
        // Sent at once, or held for approval when a rule asks one (startOrHold.ts).
        const outcome = await startOrHold(services, ready, startRequestOf(ready, services, appBase, call), (pending) => {
          call.onStored?.(pending);
          return send();
        });
        return { response: await answerStart(outcome, ready, services, call, appBase), upstream, outcome };
      });
    } finally {
      releaseWait?.();
    }
  } catch (thrown) {
    if (refusalCodes.has(toGatewayError(thrown).code) && record.target === '(invalid)') {
      // A caller refused before its call was validated: the path it asked for, as the route read it.
      record.target = `/${fillPath(resolvePathTemplate(operation, services.config.PROVIDER_NAMESPACE), call.params)}`;
    }
    throw thrown;
  } finally {
    // A call that sent nothing upstream (a duplicate joined, a wait or a download refused) gives its draw back.
    prepared?.draw.settle();
  }
}

/** The orchestration start a prepared long-running call stands for. */
function startRequestOf(prepared: PreparedCall, services: Services, appBase: string, call: OperationCall): StartRequest {
  return {
    name: prepared.operation.operationId,
    method: prepared.operation.method,
    path: prepared.targetPath,
    query: prepared.call.forwardQuery,
    bodyText: prepared.call.body?.text,
    bodyValue: prepared.call.body?.value,
    resourceUrl: prepared.url,
    actor: services.tokens.mode === 'passthrough' ? actorOf(prepared.token) : undefined,
    startedBy: prepared.caller.primary,
    // With a policy, orchestrations belong to their starters: another caller's same request is its own.
    duplicatesPerCaller: services.access.policy.enforced,
    appBase,
    notifyTargets: prepared.notifyTargets,
    ...(call.restart ?? {}),
  };
}

/**
 * The answer to a long-running start: at once, or with `gateway-wait` when the orchestration
 * ends (its final answer, as `operations/{id}` gives it) or the wait runs out (the usual
 * answer, with Location and Retry-After as they stand then). The wait counts from the call's
 * arrival, so the upstream's own time is part of it.
 */
async function answerStart(
  outcome: StartOutcome | HeldOutcome,
  prepared: PreparedCall,
  services: Services,
  call: OperationCall,
  appBase: string,
): Promise<HttpResponseInit> {
  const { waitSeconds } = prepared.call;
  if (!waitSeconds || outcome.kind === 'final' || !['Pending', 'Running'].includes(outcome.state.runtimeStatus)) {
    return startAnswer(outcome, appBase, call.correlationId, services.now());
  }
  const untilMs = call.startedMs + waitSeconds * 1000;
  const state = (await waitForEnd(services, outcome.state.id, { untilMs, authorization: call.authorization, signal: call.signal })) ?? outcome.state;
  if (['Pending', 'Running'].includes(state.runtimeStatus)) return startAnswer({ ...outcome, state }, appBase, call.correlationId, services.now());
  return operationAnswer(state, appBase, call.correlationId, services.now());
}

/**
 * Which of a caller's shares an operation draws on: by its class, as ACCESS_POLICY names it, so a
 * read that is a POST (event details) counts against the reads a rule allows.
 */
function callKindOf(operation: OperationSpec): CallKind {
  return operation.access === 'write' ? 'writes' : 'reads';
}

/** Sends a prepared call as it was prepared: its method, URL, headers, body and token. Its draw on the caller's share is spent. */
function sendPrepared(prepared: PreparedCall): Promise<UpstreamResponse> {
  prepared.draw.spend();
  return prepared.client.send({
    method: prepared.operation.method,
    url: prepared.url,
    headers: prepared.headers,
    body: prepared.call.body?.text,
    token: prepared.token,
    callTrace: prepared.callTrace,
  });
}

/** Everything checked and resolved before the first byte goes upstream; the record learns the target as soon as it is known. */
async function prepareCall(services: Services, call: OperationCall): Promise<PreparedCall> {
  const { config } = services;
  const { operation, caller, correlationId, callTrace } = call;
  const grant = grantFor(services, caller, {
    names: [operation.operationId, operation.name],
    access: operation.access,
    unscoped: operation.upstream !== 'management',
  });
  const validated = validateOperationCall(
    operation,
    { params: { ...call.params }, query: call.query, contentType: call.body?.contentType ?? null, bodyBytes: call.body ? await call.body.read() : noBody },
    { maxBodyBytes: config.MAX_REQUEST_BODY_BYTES, maxPages: config.MAX_PAGES, maxWaitSeconds: longestWaitSeconds(config) },
  );
  const notifyTargets = notifyTargetsOf(call.notify ?? null, config.NOTIFY_ALLOWED_ORIGINS, operation.longRunning !== undefined);
  const targetPath = fillPath(resolvePathTemplate(operation, config.PROVIDER_NAMESPACE), validated.params);
  call.record.target = `/${targetPath}`;
  if (operation.upstream === 'management') {
    assertScopeAllowed(targetPath, config.ALLOWED_SCOPES);
    assertWithinGrant(targetPath, grant);
    assertBodyWithinScopes(validated.body?.value, config.ALLOWED_SCOPES, grant.scopes);
  }

  const client = services.upstreams[operation.upstream];
  const token = await services.tokens.getToken({ upstream: operation.upstream, callerAuthorization: call.authorization });
  const url = new URL(`${client.baseUrl}/${targetPath}`);
  for (const [name, value] of validated.forwardQuery) url.searchParams.append(name, value);

  const headers: Record<string, string> = { 'x-ms-client-request-id': correlationId, 'x-ms-correlation-request-id': correlationId };
  for (const name of forwardedCallerHeaders) {
    const value = call.forwardedHeaders?.[name];
    if (value) headers[name] = value;
  }
  if (validated.body) headers['content-type'] = 'application/json';
  if (operation.upstream === 'lifecycle') {
    headers['content-type'] = 'application/json';
    headers[config.LIFECYCLE_VERSION_HEADER] = config.LIFECYCLE_API_VERSION;
  }
  const limits = { deadlineAt: services.now() + config.UPSTREAM_TIMEOUT_MS, maxItems: config.MAX_MERGED_ITEMS, maxBytes: config.MAX_MERGED_BYTES };
  // Each later page of a merge is sent as soon as it is drawn.
  const takeRead = async () => (await takeCallerRate(services, caller, grant, 'reads')).spend();
  // Drawn last, once nothing before the send can refuse the call (its token included); the pipeline settles it.
  const draw = await takeCallerRate(services, caller, grant, callKindOf(operation));
  const targets = call.endTarget ? [...(notifyTargets ?? []), call.endTarget] : notifyTargets;
  return {
    operation,
    call: validated,
    targetPath,
    url: url.toString(),
    headers,
    token,
    client,
    correlationId,
    limits,
    notifyTargets: targets,
    caller,
    draw,
    takeRead,
    callTrace,
  };
}

const noBody = new Uint8Array(0);

async function shapeResponse(prepared: PreparedCall, response: UpstreamResponse, appBase: string): Promise<HttpResponseInit> {
  const { operation, call, correlationId } = prepared;
  if (response.status >= 300 || !/\S/.test(response.bodyText)) return upstreamResponse(response, correlationId);
  const body = parseUpstreamJson(response);
  if (!operation.pageable) return upstreamResponse(response, correlationId);
  if (!isListPage(body)) throw new GatewayError('UpstreamBadResponse', 'The upstream list answer has no "value" array.');

  const pointAtApp = (page: ListPage): ListPage =>
    page.nextLink ? { ...page, nextLink: rewriteNextLink(page.nextLink, prepared.client.baseUrl, appBase) } : page;
  if (call.mergePages) {
    const merged = await mergePages(prepared, body, Buffer.byteLength(response.bodyText), call.mergePages);
    return upstreamResponse(response, correlationId, listPageText(pointAtApp(merged.page), merged.itemsText));
  }
  if (!body.nextLink) return upstreamResponse(response, correlationId);
  return upstreamResponse(response, correlationId, JSON.stringify(pointAtApp(body)));
}

/** `gateway-pages`: the pages merged within the merge bounds and the call's time budget. */
function mergePages(prepared: PreparedCall, first: ListPage, firstBytes: number, maxPages: number) {
  const { limits } = prepared;
  const { deadlineAt } = limits;
  const fetchPage = async (nextLink: string): Promise<FetchedPage> => {
    // Each later page is one more upstream read of the caller's share; an empty share ends the merge like a bound.
    await prepared.takeRead();
    // The client refuses a nextLink off the upstream's origin before the token leaves.
    const response = await prepared.client.send({
      method: 'GET',
      url: nextLink,
      headers: prepared.headers,
      token: prepared.token,
      timeoutMs: deadlineAt - Date.now(),
      callTrace: prepared.callTrace,
    });
    if (response.status !== 200) {
      throw new GatewayError('UpstreamBadResponse', `A later page of the list answered ${response.status}.`, { target: 'nextLink' });
    }
    return { page: parseUpstreamJson(response), bytes: Buffer.byteLength(response.bodyText) };
  };
  return collectPagesText({ page: first, bytes: firstBytes }, fetchPage, { maxPages, maxItems: limits.maxItems, maxBytes: limits.maxBytes, deadlineAt });
}
