/**
 * The one handler behind every documented operation: validate, check the scope, call the
 * upstream, and pass its answer back (with `nextLink` pointing at the app, or every page
 * merged when asked). Registration in functions/ only picks the catalogue entry.
 */
import type { HttpRequest, HttpResponseInit, InvocationContext } from '@azure/functions';
import { GatewayError, toGatewayError } from '../errors';
import type { Services } from '../services';
import { fillPath, resolvePathTemplate, type OperationSpec } from '../spec/catalogue';
import { collectPagesText, isListPage, listPageText, rewriteNextLink, type FetchedPage, type ListPage } from '../upstream/paging';
import { actorOf } from '../upstream/tokenSource';
import { refuseRedirect, type UpstreamClient, type UpstreamResponse } from '../upstream/upstreamClient';
import { parseUpstreamJson } from '../upstream/upstreamJson';
import { appBaseOf } from '../http/appBase';
import { assertBodyWithinScopes } from './bodyReferences';
import { formatCallRecord } from './callLog';
import type { StartOutcome, StartRequest } from '../orchestration/orchestrationEngine';
import { callerGoneSignalOf, longestWaitSeconds, takeWaitSlot, waitForEnd } from './gatewayWait';
import { notifyHeader, notifyTargetsOf } from './notifyTarget';
import { operationAnswer, startAnswer } from './orchestrationAnswers';
import type { CallKind } from '../access/callerRateLimiter';
import { remainingBudgetOf } from '../upstream/upstreamBudget';
import { assertWithinGrant, grantFor, refusalCodes, takeCallerRate, type ShareDraw } from './authorization';
import { callerLogFields, callerOf, type CallerIdentity } from '../callers/callerIdentity';
import { replayOf } from './replayedStart';
import { startOrHold, type HeldOutcome } from './startOrHold';
import { correlationIdOf } from '../http/correlation';
import { validateOperationCall, type OperationCall } from './operationRequest';
import { bodyBytesOf } from '../http/requestBody';
import { errorCodeOf } from '../rules/errorCodes';
import { failureForLog } from '../rules/redaction';
import { errorResponse, upstreamResponse } from './answers';
import { assertScopeAllowed } from '../rules/scopeGuard';
import { callTraceOf, inCallTrace, recordUpstreamIdsOnCall, traceIncoming, type CallTrace } from '../telemetry/hooks';
import { upstreamIdsOf } from '../telemetry/upstreamIds';

/** Caller headers that carry meaning for the upstream and are forwarded as they are. */
const forwardedCallerHeaders = ['if-match', 'if-none-match', 'accept-language'];

/** `params` replaces the route's own, for a dispatcher that derives the documented ones. */
export type OperationHandler = (request: HttpRequest, context: InvocationContext, params?: Record<string, string>) => Promise<HttpResponseInit>;

export interface PreparedCall {
  operation: OperationSpec;
  call: OperationCall;
  targetPath: string;
  url: string;
  headers: Record<string, string>;
  token: string;
  client: UpstreamClient;
  correlationId: string;
  /** Bounds of a merge of pages; the deadline is the call's time budget from its start. */
  limits: { deadlineAt: number; maxItems: number; maxBytes: number };
  /** Where to tell of a long-running operation's end (`x-gateway-notify`). */
  notifyTargets?: string[];
  caller: CallerIdentity;
  /** The call's draw on the caller's share (ACCESS_POLICY): spent by `sendUpstream`, else given back by `settle`. */
  draw: ShareDraw;
  /** Takes one more upstream read from the caller's share (ACCESS_POLICY), or throws 429. */
  takeRead: () => Promise<void>;
  /** The incoming call's trace, handed to its upstream requests. */
  callTrace?: CallTrace;
}

export function createOperationHandler(operation: OperationSpec, getServices: () => Services): OperationHandler {
  return traceIncoming(
    operation.operationId,
    async (request, context, params = request.params) => {
      const services = getServices();
      const callTrace = callTraceOf(context);
      const startedMs = services.now();
      const correlationId = correlationIdOf(request.headers);
      // Parsed once: its query (as sent, see requestQuery.ts) holds the caller's key and the call's
      // parameters, its path the app's base.
      const requestUrl = new URL(request.url);
      const query = requestUrl.searchParams;
      const caller = callerOf(request.headers, query, services.config.WEBSITE_AUTH_ENABLED);
      // The target as soon as it is known, so a refusal's record names it too.
      const known: { targetPath?: string } = {};
      let decision: string | undefined;
      let response: HttpResponseInit;
      let upstream = undefined as UpstreamResponse | undefined;
      let prepared: PreparedCall | undefined;
      try {
        prepared = await prepareCall(operation, request, params, services, { correlationId, caller, query, known, callTrace });
        decision = 'allowed';
        const appBase = appBaseOf(requestUrl, prepared.targetPath, services.config.APP_PUBLIC_URL);
        // Only the certificate download reads the guard, and with it storage (built on first use).
        const downloadGuard = operation.rateLimitedPerEnvironment ? services.certificates.downloadGuard : undefined;
        const ready = prepared;
        const send = async () => {
          await downloadGuard?.acquire(ready.call.params);
          upstream = await sendUpstream(ready);
          await downloadGuard?.observe(ready.call.params, upstream);
          return refuseRedirect(upstream);
        };
        // Upstream requests take the call's trace by hand; what also calls storage (a start and its
        // wait, the download guard) runs within it, for the storage calls' spans.
        if (operation.longRunning) {
          // A held wait is counted before the upstream is called: a refused one sends nothing.
          const { waitSeconds } = prepared.call;
          const releaseWait = waitSeconds ? takeWaitSlot(services, caller, startedMs + waitSeconds * 1000) : undefined;
          try {
            response = await inCallTrace(callTrace, async () => {
              // Sent at once, or held for approval when a rule asks one (approvalStart.ts).
              const outcome = await startOrHold(services, ready, { ...startRequestOf(ready, services, appBase), ...replayOf(request) }, send);
              return answerStart(outcome, ready, request, services, { appBase, correlationId, startedMs });
            });
          } finally {
            releaseWait?.();
          }
        } else {
          const answer = downloadGuard ? await inCallTrace(callTrace, send) : await send();
          response = await shapeResponse(prepared, answer, appBase);
        }
      } catch (thrown) {
        const error = toGatewayError(thrown);
        if (refusalCodes.has(error.code)) {
          decision = error.code;
          // A caller refused before its call was validated: the path it asked for, as the route read it.
          known.targetPath ??= fillPath(resolvePathTemplate(operation, services.config.PROVIDER_NAMESPACE), params);
        }
        if (error.code === 'InternalError') context.error(`${operation.name} failed: ${failureForLog(thrown)}`);
        response = errorResponse(error, correlationId);
      }
      // A call that sent nothing upstream (a duplicate joined, a wait or a download refused) gives its draw back.
      prepared?.draw.settle();
      context.log(
        formatCallRecord({
          operation: operation.operationId,
          target: known.targetPath ? `/${known.targetPath}` : '(invalid)',
          ...callerLogFields(caller),
          decision,
          status: response.status ?? 200,
          upstreamStatus: upstream?.status,
          attempts: upstream?.attempts,
          upstreamRemaining: upstream && remainingBudgetOf(upstream.headers),
          upstreamIds: upstream && upstreamIdsOf(upstream.headers),
          durationMs: services.now() - startedMs,
          correlationId,
          errorCode: errorCodeOf(response),
        }),
      );
      recordUpstreamIdsOnCall(upstream?.headers, callTrace);
      return response;
    },
    { passTrace: true },
  );
}

/** The orchestration start a prepared long-running call stands for. */
export function startRequestOf(prepared: PreparedCall, services: Services, appBase: string): StartRequest {
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
  };
}

/**
 * The answer to a long-running start: at once, or with `gateway-wait` when the orchestration
 * ends (its final answer, as `operations/{id}` gives it) or the wait runs out (the usual
 * answer, with Location and Retry-After as they stand then). The wait counts from the request's
 * arrival, so the upstream's own time is part of it.
 */
async function answerStart(
  outcome: StartOutcome | HeldOutcome,
  prepared: PreparedCall,
  request: HttpRequest,
  services: Services,
  at: { appBase: string; correlationId: string; startedMs: number },
): Promise<HttpResponseInit> {
  const { waitSeconds } = prepared.call;
  if (!waitSeconds || outcome.kind === 'final' || !['Pending', 'Running'].includes(outcome.state.runtimeStatus)) {
    return startAnswer(outcome, at.appBase, at.correlationId, services.now());
  }
  const untilMs = at.startedMs + waitSeconds * 1000;
  const authorization = request.headers.get('authorization') ?? undefined;
  const state = (await waitForEnd(services, outcome.state.id, { untilMs, authorization, signal: callerGoneSignalOf(request) })) ?? outcome.state;
  if (['Pending', 'Running'].includes(state.runtimeStatus)) return startAnswer({ ...outcome, state }, at.appBase, at.correlationId, services.now());
  return operationAnswer(state, at.appBase, at.correlationId, services.now());
}

/**
 * Which of a caller's shares an operation draws on: by its class, as ACCESS_POLICY names it, so a
 * read that is a POST (event details) counts against the reads a rule allows.
 */
function callKindOf(operation: OperationSpec): CallKind {
  return operation.access === 'write' ? 'writes' : 'reads';
}

/** Sends a prepared call as it was prepared: its method, URL, headers, body and token. Its draw on the caller's share is spent. */
export function sendUpstream(prepared: PreparedCall): Promise<UpstreamResponse> {
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

/** Everything checked and resolved before the first byte goes upstream. */
export async function prepareCall(
  operation: OperationSpec,
  request: HttpRequest,
  params: Record<string, string>,
  services: Services,
  {
    correlationId,
    caller,
    query,
    known = {},
    callTrace,
  }: { correlationId: string; caller: CallerIdentity; query: URLSearchParams; known?: { targetPath?: string }; callTrace?: CallTrace },
): Promise<PreparedCall> {
  const { config } = services;
  const grant = grantFor(services, caller, {
    names: [operation.operationId, operation.name],
    access: operation.access,
    unscoped: operation.upstream !== 'management',
  });
  const call = validateOperationCall(
    operation,
    {
      params: { ...params },
      query,
      contentType: request.headers.get('content-type'),
      bodyBytes: await bodyBytesOf(request),
    },
    { maxBodyBytes: config.MAX_REQUEST_BODY_BYTES, maxPages: config.MAX_PAGES, maxWaitSeconds: longestWaitSeconds(config) },
  );
  const notifyTargets = notifyTargetsOf(request.headers.get(notifyHeader), config.NOTIFY_ALLOWED_ORIGINS, operation.longRunning !== undefined);
  const targetPath = fillPath(resolvePathTemplate(operation, config.PROVIDER_NAMESPACE), call.params);
  known.targetPath = targetPath;
  if (operation.upstream === 'management') {
    assertScopeAllowed(targetPath, config.ALLOWED_SCOPES);
    assertWithinGrant(targetPath, grant);
    assertBodyWithinScopes(call.body?.value, config.ALLOWED_SCOPES, grant.scopes);
  }

  const client = services.upstreams[operation.upstream];
  const token = await services.tokens.getToken({ upstream: operation.upstream, callerAuthorization: request.headers.get('authorization') ?? undefined });
  const url = new URL(`${client.baseUrl}/${targetPath}`);
  for (const [name, value] of call.forwardQuery) url.searchParams.append(name, value);

  const headers: Record<string, string> = { 'x-ms-client-request-id': correlationId, 'x-ms-correlation-request-id': correlationId };
  for (const name of forwardedCallerHeaders) {
    const value = request.headers.get(name);
    if (value) headers[name] = value;
  }
  if (call.body) headers['content-type'] = 'application/json';
  if (operation.upstream === 'lifecycle') {
    headers['content-type'] = 'application/json';
    headers[config.LIFECYCLE_VERSION_HEADER] = config.LIFECYCLE_API_VERSION;
  }
  const limits = { deadlineAt: services.now() + config.UPSTREAM_TIMEOUT_MS, maxItems: config.MAX_MERGED_ITEMS, maxBytes: config.MAX_MERGED_BYTES };
  // Each later page of a merge is sent as soon as it is drawn.
  const takeRead = async () => (await takeCallerRate(services, caller, grant, 'reads')).spend();
  // Drawn last, once nothing before the send can refuse the call (its token included); the caller settles it.
  const draw = await takeCallerRate(services, caller, grant, callKindOf(operation));
  return { operation, call, targetPath, url: url.toString(), headers, token, client, correlationId, limits, notifyTargets, caller, draw, takeRead, callTrace };
}

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
