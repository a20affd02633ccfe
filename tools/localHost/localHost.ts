/**
 * The local host: serves the real `app.http` registrations over HTTP and runs the
 * `app.timer` ones on their NCRONTAB schedules, invoking them through the programming model
 * the way the Node worker does (functionRegistrations.ts). It refuses overlapping routes at
 * start-up, since the real host would pick between them by function name.
 */
import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { readBody } from '../requestBody';
import type { Server as HttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { SecureContextOptions } from 'node:tls';
import { hooksFor, log, registeredFunctions } from './coreApi';
import { appParameterOf } from '../../src/rules';
import { allMethods, collectHttpRoutes, collectTimers, invoke, type HttpRoute, type TimerFunction } from './functionRegistrations';
import { namespaceHint, servedProviders } from './namespaceHint';
import { decodeSegment, matchRoute } from './routeTemplate';
import { runOnSchedule } from './scheduledRuns';
import { nextRunOf } from '../../src/settings';

export interface LocalHostOptions {
  /** `extensions.http.routePrefix` of host.json. */
  routePrefix: string;
  /** Named function keys; when any is set, non-anonymous routes need one (`code` or `x-functions-key`). */
  keys?: Record<string, string>;
  /** The host's own request size limit (the real host's default is 100 MB). */
  maxRequestBytes?: number;
  /** Whether to run timers on their schedules (tests may trigger them by hand instead). */
  runTimers?: boolean;
  /** Serve HTTPS with this certificate (`func start --useHttps`); plain HTTP without. */
  tls?: SecureContextOptions;
}

export interface RunningHost {
  url: string;
  routes: readonly { name: string; route: string; methods: string[]; authLevel: string }[];
  timers: readonly string[];
  /** Runs a timer function now, as `POST /admin/functions/{name}` does; resolves when it ends. */
  runTimer(name: string): Promise<void>;
  close(): Promise<void>;
}

function keyMatches(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

function hostError(response: ServerResponse, status: number, code: string, message: string): void {
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify({ error: { code, message } }));
}

/** The 404 of a path no route matches; with the namespace hint also logged, since a client that shows only the status hides it. */
function noFunctionMatches(response: ServerResponse, hint: string | undefined): void {
  if (hint) log('warning', 'system', `No function matches a request: ${hint}`);
  hostError(response, 404, 'NotFound', hint ? `No function matches this route: ${hint}` : 'No function matches this route.');
}

/** What a Host header may hold: a name or an IPv4 address, or an IPv6 one in brackets, and a port. */
const hostHeaderPattern = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/**
 * The request URL as the real host presents it to a function: the scheme of the listener and
 * the Host the caller addressed (ASP.NET Core does the same), so links built on it point where
 * the caller went (`localhost` or `127.0.0.1`). A Host that is not a host name is ignored.
 */
function presentedOrigin(request: IncomingMessage, listener: URL): string {
  const host = request.headers.host;
  return host && hostHeaderPattern.test(host) ? `${listener.protocol}//${host}` : listener.origin;
}

function matchingRoute(routes: readonly HttpRoute[], path: string): { route: HttpRoute; params: Record<string, string> } | undefined {
  for (const route of routes) {
    const params = matchRoute(route.template, path);
    if (params) return { route, params };
  }
  return undefined;
}

interface RpcHttpResponse {
  statusCode?: string;
  headers?: Record<string, string>;
  body?: { bytes?: Uint8Array; string?: string } | null;
}

export async function startLocalHost(options: LocalHostOptions, port = 0): Promise<RunningHost> {
  const functions = registeredFunctions();
  const routes = collectHttpRoutes(functions);
  // A method's routes come in precedence order, and routes of the same precedence never overlap
  // (collectHttpRoutes): the first that matches is the one the real host picks.
  const routesByMethod = new Map(allMethods.map((method) => [method, routes.filter((route) => route.methods.has(method))]));
  const timers = collectTimers(functions);
  const providers = servedProviders(routes.map((route) => route.template.template));
  const keys = Object.entries(options.keys ?? {});
  const prefix = `/${options.routePrefix.replace(/^\/+|\/+$/g, '')}`.replace(/^\/$/, '');
  const maxRequestBytes = options.maxRequestBytes ?? 100 * 1024 * 1024;
  const running = new Map<string, Promise<void>>();
  const sockets = new Set<Socket>();
  let listener = new URL('http://127.0.0.1');

  const runTimer = (timer: TimerFunction, isPastDue = false): Promise<void> => {
    // Like the real host, a timer function never runs twice at once in one host.
    const current = running.get(timer.fn.metadata.name);
    if (current) return current;
    const data = {
      json: JSON.stringify({
        Schedule: { AdjustForDST: true },
        ScheduleStatus: { Last: new Date().toISOString(), Next: nextRunOf(timer.schedule, new Date())?.toISOString(), LastUpdated: new Date().toISOString() },
        IsPastDue: isPastDue,
      }),
    };
    const execution = invoke(timer.fn, timer.triggerName, data)
      .then(() => undefined)
      .catch((error: unknown) => log('error', 'system', `Timer function "${timer.fn.metadata.name}" failed: ${(error as Error).message}`))
      .finally(() => running.delete(timer.fn.metadata.name));
    running.set(timer.fn.metadata.name, execution);
    return execution;
  };

  // As the real host reads it (and the app after it, src/callers/callerIdentity.ts): the first header line,
  // else the first `code` in any case. Node joins repeated lines, so they are read apart.
  const givenKeyOf = (request: IncomingMessage, url: URL): string =>
    request.headersDistinct['x-functions-key']?.[0] ?? appParameterOf(url.searchParams, 'code') ?? '';

  const hasValidKey = (request: IncomingMessage, url: URL, keyName?: string): boolean => {
    if (keys.length === 0) return true;
    const given = givenKeyOf(request, url);
    return keys.some(([name, value]) => (!keyName || name === keyName) && keyMatches(given, value));
  };

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const url = new URL(request.url ?? '/', presentedOrigin(request, listener));
    const method = (request.method ?? 'GET').toUpperCase();

    const adminMatch = /^\/admin\/functions\/([^/]+)$/.exec(url.pathname);
    if (adminMatch && method === 'POST') {
      const name = decodeSegment(adminMatch[1]!)?.toLowerCase();
      const timer = timers.find((candidate) => candidate.fn.metadata.name.toLowerCase() === name);
      if (!timer) return hostError(response, 404, 'NotFound', 'No such non-HTTP function.');
      if (!hasValidKey(request, url, 'master')) return hostError(response, 401, 'Unauthorized', 'The admin API needs the master key.');
      await readBody(request, 1024 * 1024);
      void runTimer(timer);
      response.writeHead(202).end();
      return;
    }

    if (prefix && !(url.pathname === prefix || url.pathname.startsWith(`${prefix}/`))) {
      return hostError(response, 404, 'NotFound', `No route: function routes are under ${prefix}/.`);
    }
    const path = url.pathname.slice(prefix.length);
    const matched = matchingRoute(routesByMethod.get(method) ?? [], path);
    if (!matched) {
      const accepted = [...new Set(routes.filter((route) => matchRoute(route.template, path)).flatMap((route) => [...route.methods]))].sort();
      return accepted.length > 0
        ? hostError(response, 404, 'NotFound', `No function accepts ${method} on this route: it takes ${accepted.join(', ')}.`)
        : noFunctionMatches(response, namespaceHint(path, providers));
    }
    const { route, params } = matched;
    if (route.authLevel !== 'anonymous' && !hasValidKey(request, url)) {
      // A key given and refused is told apart from none given; which keys exist is never said.
      return givenKeyOf(request, url)
        ? hostError(response, 401, 'Unauthorized', 'The function key given was not accepted: send a key of this app in x-functions-key or ?code=.')
        : hostError(response, 401, 'Unauthorized', 'This function needs a key: send it in x-functions-key or ?code=.');
    }
    const body = await readBody(request, maxRequestBytes);
    if (!body) return hostError(response, 413, 'PayloadTooLarge', `The request body exceeds the host's limit of ${maxRequestBytes} bytes.`);

    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(request.headers)) if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
    const http = {
      method,
      url: url.toString(),
      headers,
      query: Object.fromEntries(url.searchParams),
      params: params!,
      body: { bytes: body },
    };
    const callerGone = new AbortController();
    response.on('close', () => {
      if (!response.writableFinished) callerGone.abort();
    });
    let returned: { http?: RpcHttpResponse } | undefined;
    try {
      const traceContext = headers.traceparent ? { traceParent: headers.traceparent, traceState: headers.tracestate } : undefined;
      returned = (await invoke(route.fn, route.triggerName, { http }, callerGone.signal, traceContext)) as { http?: RpcHttpResponse } | undefined;
    } catch (error) {
      log('error', 'system', `Function "${route.fn.metadata.name}" failed: ${(error as Error).message}`);
      return hostError(response, 500, 'InternalError', 'The function failed.');
    }
    const answer = returned?.http ?? {};
    const status = Number(answer.statusCode ?? 200);
    // A view of the bytes the programming model handed over, not a copy: a merged list is megabytes.
    const { bytes } = answer.body ?? {};
    const bodyBytes = bytes ? Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) : Buffer.from(answer.body?.string ?? '');
    response.writeHead(status, answer.headers ?? {});
    response.end(method === 'HEAD' ? undefined : bodyBytes);
  };

  const onRequest = (request: IncomingMessage, response: ServerResponse) => {
    handle(request, response).catch((error: unknown) => {
      log('error', 'system', `Local host failed on ${request.method} ${request.url?.split('?')[0]}: ${(error as Error).message}`);
      if (!response.headersSent) hostError(response, 500, 'InternalError', 'The host failed.');
      else response.destroy();
    });
  };
  // node:https only when serving HTTPS: loading it costs every plain start a few milliseconds.
  const server: Server | HttpsServer = options.tls ? (await import('node:https')).createServer(options.tls, onRequest) : createServer(onRequest);
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  listener = new URL(`${options.tls ? 'https' : 'http'}://127.0.0.1:${(server.address() as AddressInfo).port}`);

  for (const hook of hooksFor('appStart')) await hook({ hookData: {}, appStartContext: {} });
  const clocks = options.runTimers === false ? [] : timers.map((timer) => runOnSchedule(timer.schedule, () => void runTimer(timer)));
  if (options.runTimers !== false) for (const timer of timers.filter((candidate) => candidate.runOnStartup)) void runTimer(timer);

  return {
    url: listener.origin,
    routes: routes.map((route) => ({ name: route.fn.metadata.name, route: route.template.template, methods: [...route.methods], authLevel: route.authLevel })),
    timers: timers.map((timer) => timer.fn.metadata.name),
    runTimer: (name) => {
      const timer = timers.find((candidate) => candidate.fn.metadata.name === name);
      if (!timer) return Promise.reject(new Error(`No timer function "${name}".`));
      return runTimer(timer);
    },
    close: async () => {
      for (const clock of clocks) clock.stop();
      await Promise.allSettled(running.values());
      for (const hook of hooksFor('appTerminate')) await hook({ hookData: {}, appTerminateContext: {} });
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
