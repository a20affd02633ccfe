/**
 * `POST orchestrations/{id}/restart` (Durable Functions' name): the stored request of an ended
 * orchestration started again as a new one. A restart is a start: the request is replayed
 * through the operation's own handler, with the restarting caller's identity and (in
 * passthrough mode) its token, so the access policy as it stands now, scopes, the caller's rate
 * share, validation, duplicates and anything else a start goes through apply again, and it is
 * answered as a start is. The two are linked both ways: `restartedAs` on the original, written
 * before the start (restartLinks.ts: one restart of an original wins), and `restartedFrom` on
 * the new one, handed to the start in process (replayedStart.ts), never read from a request.
 */
import { randomUUID } from 'node:crypto';
import { HttpRequest, type HttpResponseInit } from '@azure/functions';
import { GatewayError } from '../errors';
import { isActive, type OrchestrationState } from '../orchestration/orchestrationState';
import { linkRestart, unlinkRestart } from '../orchestration/restartLinks';
import { redactedMarker } from '../rules/redaction';
import type { Services } from '../services';
import { operations, resolvePathTemplate, type OperationSpec } from '../spec/catalogue';
import type { AppCall } from '../http/appHandler';
import { createOperationHandler, type OperationHandler } from './operationCall';
import { orchestrationIdHeader } from './orchestrationAnswers';
import { visibleOrchestration, type Viewer } from './orchestrationVisibility';
import { markReplay } from './replayedStart';
import { appParameterOf, rawQueryOf } from '../http/requestQuery';

/** Headers of the restart request that describe its own body or connection, not the caller. */
const notReplayedHeaders = new Set(['content-length', 'content-type', 'transfer-encoding', 'connection', 'expect', 'host', 'x-ms-continuation-token']);
/** The app's own parameters of the restart request the replay keeps: the key, and a wait on a single restart (never on a bulk one's many). */
const replayedAppParameters = (single: boolean) => (single ? ['code', 'gateway-wait'] : ['code']);

/** Whether a stored body holds a value the store redacted: such a request cannot be sent as it was. */
function holdsRedacted(value: unknown): boolean {
  if (value === redactedMarker) return true;
  if (Array.isArray(value)) return value.some(holdsRedacted);
  return typeof value === 'object' && value !== null && Object.values(value).some(holdsRedacted);
}

/** The route values of a stored path, read against the operation's path template. */
function paramsOf(operation: OperationSpec, path: string, providerNamespace: string): Record<string, string> | undefined {
  const template = resolvePathTemplate(operation, providerNamespace).split('/');
  let segments = path.split('/');
  const params: Record<string, string> = {};
  if (template[0] === '{scope}') {
    const scopeLength = segments.length - (template.length - 1);
    if (scopeLength < 1) return undefined;
    params.scope = segments.slice(0, scopeLength).map(decodeURIComponent).join('/');
    segments = ['', ...segments.slice(scopeLength)];
  }
  if (segments.length !== template.length) return undefined;
  for (const [index, part] of template.entries()) {
    if (index === 0 && part === '{scope}') continue;
    const name = /^\{(\w+)\}$/.exec(part)?.[1];
    if (name) params[name] = decodeURIComponent(segments[index]!);
    else if (part.toLowerCase() !== segments[index]!.toLowerCase()) return undefined;
  }
  return params;
}

const handlers = new Map<string, OperationHandler>();
function handlerOf(operation: OperationSpec, services: Services): OperationHandler {
  let handler = handlers.get(operation.name);
  if (!handler) handlers.set(operation.name, (handler = createOperationHandler(operation, () => services)));
  return handler;
}

/** What is replayed, or why it cannot be: checked before the original is linked. */
function replayPlanOf(original: OrchestrationState, services: Services) {
  const { id } = original;
  if (isActive(original)) {
    throw new GatewayError(
      'OrchestrationRunning',
      `Orchestration ${id} is still ${original.runtimeStatus}: only an ended one (Completed, Failed, Terminated) can be restarted. Wait for its end, or terminate it first.`,
      { target: 'id' },
    );
  }
  if (holdsRedacted(original.input.body)) {
    throw new GatewayError(
      'Conflict',
      `Orchestration ${id}'s request held secrets, which are never stored (they read "${redactedMarker}"), so it cannot be sent again as it was: send the request again yourself (${original.input.method} ${original.input.path}).`,
      { target: 'input.body' },
    );
  }
  const operation = operations.find((candidate) => candidate.operationId === original.name && candidate.longRunning);
  const params = operation && paramsOf(operation, original.input.path, services.config.PROVIDER_NAMESPACE);
  if (!operation || !params) {
    throw new GatewayError(
      'Conflict',
      `Orchestration ${id}'s request (${original.name} on ${original.input.path}) is not one this app serves any more: send the request again yourself.`,
      { target: 'id' },
    );
  }
  return { operation, params };
}

/** The stored request, as the restarting caller sends it: its identity headers (and token), the stored method, path, query and body. */
function replayRequestOf(call: AppCall, original: OrchestrationState, single: boolean): HttpRequest {
  const url = new URL(`${call.appBase}/${original.input.path}`);
  for (const [name, value] of original.input.query) url.searchParams.append(name, value);
  const restartQuery = rawQueryOf(call.request);
  for (const name of replayedAppParameters(single)) {
    const value = appParameterOf(restartQuery, name);
    if (value !== null) url.searchParams.set(name, value);
  }
  const headers: Record<string, string> = {};
  call.request.headers.forEach((value, name) => {
    if (!notReplayedHeaders.has(name.toLowerCase())) headers[name] = value;
  });
  const { body } = original.input;
  if (body !== undefined) headers['content-type'] = 'application/json';
  return new HttpRequest({
    method: original.input.method,
    url: url.toString(),
    headers,
    ...(body === undefined ? {} : { body: { string: JSON.stringify(body) } }),
  });
}

/** A header of an answer, whatever form its headers take. */
export function headerOf(response: HttpResponseInit, name: string): string | undefined {
  return new Headers(response.headers as ConstructorParameters<typeof Headers>[0]).get(name) ?? undefined;
}

/**
 * Restarts one orchestration the caller may see; answers as the start answers (or throws the
 * refusal). A start that made no new orchestration (refused, or a duplicate joining a running
 * one) leaves the original unlinked.
 */
export async function restartOrchestration(call: AppCall, viewer: Viewer, id: string, { single = true } = {}): Promise<HttpResponseInit> {
  const { services } = call;
  const original = await visibleOrchestration(viewer, id);
  const { operation, params } = replayPlanOf(original, services);
  const store = services.orchestrations.store;
  const newId = randomUUID();
  await linkRestart(store, id, newId, services.now());
  let response: HttpResponseInit | undefined;
  try {
    const request = markReplay(replayRequestOf(call, original, single), { id: newId, restartedFrom: id });
    response = await handlerOf(operation, services)(request, call.context, params);
    return response;
  } finally {
    const started = (response && headerOf(response, orchestrationIdHeader) === newId) || (await store.readStatus(newId).catch(() => undefined));
    if (!started) await unlinkRestart(store, id, newId).catch(() => undefined);
  }
}
