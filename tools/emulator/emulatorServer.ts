/**
 * The management emulator: an HTTP server on 127.0.0.1 that behaves like the upstream services
 * of the spec. Written from the spec, not from the app's schemas, so the
 * two can catch each other's mistakes.
 *
 * Control routes under `/_emulator/` (no token needed): `GET requests` (the log),
 * `POST answers` (queue scripted answers or faults), `POST reset`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { CertificateBundleOptions } from './certificateBundle';
import { handleLifecycle, type LifecycleState } from './lifecycleRoutes';
import { handleManagement, type ManagementState } from './managementRoutes';
import type { EmulatorOptions, Reply } from './emulatorOptions';

export type { EmulatorOptions, Reply } from './emulatorOptions';

export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
  body: string;
  at: number;
  /** The caller's port: which connection the request came on. */
  remotePort?: number;
}

/**
 * A scripted answer for the next matching requests: a status with body, a connection reset, a
 * delay before the normal answer, a malformed body, a body dripped out a few bytes at a time
 * (`drip`: `delayMs` between chunks), as a stalling upstream sends it, or the normal certificate
 * download with the bundle `certificate` asks for (a fault, another validity or encryption).
 */
export interface ScriptedAnswer {
  method?: string;
  /** Regex source matched against the path. */
  pathPattern?: string;
  kind: 'answer' | 'reset' | 'delay' | 'malformed' | 'drip' | 'certificate';
  certificate?: CertificateBundleOptions;
  status?: number;
  headers?: Record<string, string>;
  body?: unknown;
  delayMs?: number;
  /** How many requests it applies to (default 1). */
  times?: number;
}

export interface EmulatorContext {
  options: Required<Omit<EmulatorOptions, 'port'>>;
  baseUrl: string;
  management: ManagementState;
  lifecycle: LifecycleState;
}

export interface Emulator {
  url: string;
  requests: RecordedRequest[];
  context: EmulatorContext;
  script(answer: ScriptedAnswer): void;
  reset(): void;
  /** Requests to upstream routes (the control routes are not counted). */
  upstreamRequests(filter?: { method?: string; pathIncludes?: string }): RecordedRequest[];
  close(): Promise<void>;
}

export function defaultEmulatorOptions(options: EmulatorOptions = {}): Required<Omit<EmulatorOptions, 'port'>> {
  return {
    providerNamespace: options.providerNamespace ?? 'Vendor',
    token: options.token ?? 'emulator-token',
    otherTokens: options.otherTokens ?? [],
    lroSteps: options.lroSteps ?? 2,
    retryAfterSeconds: options.retryAfterSeconds ?? 1,
    listItems: options.listItems ?? 5,
    pageSize: options.pageSize ?? 2,
    certificateWindowMs: options.certificateWindowMs ?? 60_000,
    latencyMs: options.latencyMs ?? 0,
    lroDurationMs: options.lroDurationMs ?? 0,
    chaosRate: options.chaosRate ?? 0,
    random: options.random ?? Math.random,
    now: options.now ?? Date.now,
  };
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function send(response: ServerResponse, reply: Reply): void {
  const headers: Record<string, string> = { 'x-ms-request-id': cryptoId(), ...reply.headers };
  if (reply.body === undefined) {
    response.writeHead(reply.status, headers).end();
    return;
  }
  const text = typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body);
  headers['content-type'] ??= 'application/json; charset=utf-8';
  response.writeHead(reply.status, headers).end(text);
}

/** Headers at once, then the body 16 bytes at a time, until it is sent or the caller hangs up. */
async function drip(response: ServerResponse, answer: ScriptedAnswer): Promise<void> {
  const text = JSON.stringify(answer.body ?? { value: [] });
  response.writeHead(answer.status ?? 200, { 'content-type': 'application/json', ...answer.headers });
  for (let offset = 0; offset < text.length && !response.destroyed; offset += 16) {
    response.write(text.slice(offset, offset + 16));
    await new Promise((resolve) => setTimeout(resolve, answer.delayMs ?? 100));
  }
  if (!response.destroyed) response.end();
}

let idCounter = 0;
function cryptoId(): string {
  idCounter += 1;
  return `00000000-0000-4000-8000-${idCounter.toString(16).padStart(12, '0')}`;
}

/** ARM's throttling headers: what is left of the caller's reads or writes, one less each call. */
function withRemainingBudget(context: EmulatorContext, method: string, reply: Reply): Reply {
  const { remaining } = context.management;
  const kind = method === 'GET' ? 'reads' : 'writes';
  remaining[kind] = Math.max(0, remaining[kind] - 1);
  return { ...reply, headers: { ...reply.headers, [`x-ms-ratelimit-remaining-subscription-${kind}`]: String(remaining[kind]) } };
}

export async function startEmulator(options: EmulatorOptions = {}): Promise<Emulator> {
  const resolved = defaultEmulatorOptions(options);
  const requests: RecordedRequest[] = [];
  let scripted: ScriptedAnswer[] = [];
  const sockets = new Set<Socket>();
  const context: EmulatorContext = {
    options: resolved,
    baseUrl: '',
    management: { resources: new Map(), operations: new Map(), remaining: { reads: 12_000, writes: 1200 } },
    lifecycle: { lastDownloadAt: new Map(), issuedSecrets: [] },
  };

  const takeScripted = (method: string, path: string): ScriptedAnswer | undefined => {
    const index = scripted.findIndex(
      (answer) => (!answer.method || answer.method === method) && (!answer.pathPattern || new RegExp(answer.pathPattern).test(path)),
    );
    if (index < 0) return undefined;
    const answer = scripted[index]!;
    const remaining = (answer.times ?? 1) - 1;
    if (remaining <= 0) scripted.splice(index, 1);
    else scripted[index] = { ...answer, times: remaining };
    return answer;
  };

  /** A random fault, at the configured rate: what a service under load does now and then. */
  const chaos = (): ScriptedAnswer | undefined => {
    if (resolved.chaosRate <= 0 || resolved.random() >= resolved.chaosRate) return undefined;
    const faults: ScriptedAnswer[] = [
      { kind: 'answer', status: 429, headers: { 'retry-after': '0' }, body: { error: { code: 'TooManyRequests', message: 'Throttled.' } } },
      { kind: 'answer', status: 503, body: { error: { code: 'ServiceUnavailable', message: 'Try again.' } } },
      { kind: 'reset' },
      { kind: 'delay', delayMs: 50 },
    ];
    return faults[Math.floor(resolved.random() * faults.length)];
  };

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const url = new URL(request.url ?? '/', context.baseUrl);
    const body = await readBody(request);
    const method = request.method ?? 'GET';

    if (url.pathname.startsWith('/_emulator/')) {
      handleControl(url.pathname.slice('/_emulator/'.length), method, body, response);
      return;
    }

    requests.push({
      method,
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, String(value)])),
      body,
      at: resolved.now(),
      remotePort: request.socket.remotePort,
    });

    if (resolved.latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, resolved.latencyMs));
    const answer = takeScripted(method, url.pathname) ?? chaos();
    if (answer?.kind === 'reset') {
      request.socket.destroy();
      return;
    }
    if (answer?.kind === 'delay') {
      // A slow answer; if the caller gives up first, the wait ends with its connection.
      await new Promise<void>((resolve) => {
        const onClose = () => {
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(() => {
          request.socket.off('close', onClose);
          resolve();
        }, answer.delayMs ?? 1000);
        request.socket.once('close', onClose);
      });
      if (request.socket.destroyed) return;
    }
    if (answer?.kind === 'malformed') {
      response.writeHead(answer.status ?? 200, { 'content-type': 'application/json' }).end('{"value": [ this is not json');
      return;
    }
    if (answer?.kind === 'answer') {
      send(response, { status: answer.status ?? 200, headers: answer.headers, body: answer.body });
      return;
    }
    if (answer?.kind === 'drip') {
      await drip(response, answer);
      return;
    }

    const accepted = [resolved.token, ...resolved.otherTokens].map((token) => `Bearer ${token}`);
    const isLifecycle = url.pathname.startsWith('/environmentinfo/');
    if (!accepted.includes(request.headers.authorization ?? '')) {
      send(
        response,
        isLifecycle
          ? { status: 401 }
          : { status: 401, body: { error: { code: 'AuthenticationFailed', message: 'The bearer token is missing or not valid.' } } },
      );
      return;
    }
    const reply = isLifecycle
      ? handleLifecycle(context, method, url, request.headers, answer?.kind === 'certificate' ? answer.certificate : undefined)
      : withRemainingBudget(context, method, handleManagement(context, method, url, body));
    // ARM answers the client's correlation id back (x-ms-correlation-request-id), beside its own x-ms-request-id.
    const correlation = request.headers['x-ms-correlation-request-id'];
    send(
      response,
      typeof correlation === 'string' && !isLifecycle ? { ...reply, headers: { ...reply.headers, 'x-ms-correlation-request-id': correlation } } : reply,
    );
  };

  const handleControl = (route: string, method: string, body: string, response: ServerResponse): void => {
    if (route === 'requests' && method === 'GET') return send(response, { status: 200, body: requests });
    if (route === 'answers' && method === 'POST') {
      const answers = JSON.parse(body) as ScriptedAnswer | ScriptedAnswer[];
      scripted.push(...(Array.isArray(answers) ? answers : [answers]));
      return send(response, { status: 204 });
    }
    if (route === 'reset' && method === 'POST') {
      reset();
      return send(response, { status: 204 });
    }
    send(response, { status: 404, body: { error: { code: 'NotFound', message: 'Unknown emulator control route.' } } });
  };

  const reset = () => {
    requests.length = 0;
    scripted = [];
    context.management.resources.clear();
    context.management.operations.clear();
    context.management.remaining = { reads: 12_000, writes: 1200 };
    context.lifecycle.lastDownloadAt.clear();
  };

  const server: Server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) send(response, { status: 500, body: { error: { code: 'EmulatorError', message: String(error) } } });
    });
  });
  server.keepAliveTimeout = 5000;
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  // A port in use rejects (npm start then says how to choose another) rather than crashing the process.
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  context.baseUrl = `http://127.0.0.1:${port}`;

  return {
    url: context.baseUrl,
    requests,
    context,
    script: (answer) => scripted.push(answer),
    reset,
    upstreamRequests: (filter = {}) =>
      requests.filter((entry) => (!filter.method || entry.method === filter.method) && (!filter.pathIncludes || entry.path.includes(filter.pathIncludes))),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
