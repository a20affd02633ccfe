/**
 * Sends requests to an upstream with undici: keep-alive pools per origin (the Agent keeps
 * one pool per origin), a time budget per call, retries only where safe, and a token only for
 * URLs on the upstream's own origin.
 */
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { Readable } from 'node:stream';
import { Agent, type Dispatcher } from 'undici';
import { GatewayError } from '../errors';
import { nestingDepth } from '../rules';
import { retryDelayMs, type RetryPolicy } from './retryStrategy';
import { trustedUrlOf } from './urlGuard';
import { traceUpstreamAttempt, type CallTrace } from '../telemetry';

export interface UpstreamRequest {
  method: string;
  url: string;
  headers?: Record<string, string>;
  body?: string;
  /** The bearer token; sent only if `url` is on the client's origin. */
  token?: string;
  /** A budget shorter than the client's own, for a call that is part of a longer one. */
  timeoutMs?: number;
  /** A bound on the answer's size smaller than the client's own (a status read, say). */
  maxResponseBytes?: number;
  /** The incoming call's trace, handed on by hand (src/telemetry/hooks.ts callTraceOf). */
  callTrace?: CallTrace;
}

export interface UpstreamResponse {
  status: number;
  headers: Record<string, string>;
  bodyText: string;
  /** How many attempts the call took. */
  attempts: number;
}

export interface UpstreamClientOptions {
  /** The configured base; the only origin a token goes to. */
  baseUrl: string;
  dispatcher?: Dispatcher;
  timeoutMs: number;
  retryPolicy: RetryPolicy;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
  /** Largest answer body read, so a runaway upstream cannot exhaust memory. */
  maxResponseBytes?: number;
  /**
   * Deepest JSON nesting of an answer (UPSTREAM_MAX_JSON_DEPTH): the app walks what it reads
   * (secrets redacted, pages merged), so a deeper answer is refused before anything reads it.
   */
  maxJsonDepth?: number;
  /** Sees every answer (the throttling budget headers, say). */
  observe?: (response: UpstreamResponse) => void;
  /**
   * Gives each call without an `x-ms-client-request-id` one of its own (ARM's: a caller's call
   * forwards its correlation id; a poll or a final read made by the timer has none).
   */
  clientRequestIds?: boolean;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export function createUpstreamAgent(): Agent {
  return new Agent({ keepAliveTimeout: 30_000, keepAliveMaxTimeout: 120_000, connections: 64 });
}

/** Where one call goes, as undici takes it. */
interface Target {
  origin: string;
  path: string;
}

export class UpstreamClient {
  readonly baseUrl: string;
  readonly #base: URL;
  readonly #dispatcher: Dispatcher;
  readonly #options: UpstreamClientOptions;
  readonly #now: () => number;
  readonly #sleep: (ms: number) => Promise<void>;

  constructor(options: UpstreamClientOptions) {
    this.baseUrl = options.baseUrl;
    this.#base = new URL(options.baseUrl);
    this.#options = options;
    this.#dispatcher = options.dispatcher ?? createUpstreamAgent();
    this.#now = options.now ?? Date.now;
    this.#sleep = options.sleep ?? defaultSleep;
  }

  /** Sends the request, repeating it while that is safe and the budget allows. */
  async send(request: UpstreamRequest): Promise<UpstreamResponse> {
    // The URL is checked and parsed once; every attempt goes to that same target.
    const url = trustedUrlOf(request.url, this.#base);
    if (!url) {
      throw new GatewayError('UpstreamLinkRefused', 'Refused to send a request outside the configured upstream origin.');
    }
    const target: Target = { origin: url.origin, path: `${url.pathname}${url.search}` };
    const deadline = this.#now() + Math.min(this.#options.timeoutMs, request.timeoutMs ?? Infinity);
    const headers: Record<string, string> = { accept: 'application/json', ...request.headers };
    if (this.#options.clientRequestIds) headers['x-ms-client-request-id'] ??= randomUUID();
    if (request.token) headers.authorization = `Bearer ${request.token}`;
    // One timer bounds the whole call, each attempt's body included, and is cleared when the call
    // ends (AbortSignal.timeout per attempt left a timer running to the end of each budget).
    // undici takes an EventEmitter that emits 'abort' as the signal (Dispatcher.request's
    // `signal`): making an AbortSignal costs more than the rest of the client's own work per call.
    const budget = new EventEmitter();
    const timer = setTimeout(() => budget.emit('abort'), deadline - this.#now());
    try {
      return await this.#sendWithin(request, target, headers, deadline, budget);
    } finally {
      clearTimeout(timer);
    }
  }

  async #sendWithin(
    request: UpstreamRequest,
    target: Target,
    headers: Record<string, string>,
    deadline: number,
    signal: EventEmitter,
  ): Promise<UpstreamResponse> {
    let waitedMs = 0;
    for (let attempt = 0; ; attempt += 1) {
      const remainingMs = deadline - this.#now();
      if (remainingMs <= 0) throw timeoutError();
      let outcome: UpstreamResponse | { errorCode: string | undefined; error: unknown };
      try {
        // Each attempt is a span of its own, its traceparent in its own copy of the headers.
        const facts = { method: request.method, origin: target.origin, path: target.path, attempt, waitedMs, callTrace: request.callTrace };
        outcome = await traceUpstreamAttempt(facts, headers, (sent) => this.#attempt(request, target, sent, remainingMs, signal));
        outcome.attempts = attempt + 1;
        this.#options.observe?.(outcome);
      } catch (error) {
        if (isAbort(error)) throw timeoutError(error);
        if (error instanceof GatewayError) throw error;
        outcome = { errorCode: errorCodeOf(error), error };
      }
      const delay = retryDelayMs(
        request.method,
        'status' in outcome
          ? { kind: 'response', status: outcome.status, readHeader: (name) => (outcome as UpstreamResponse).headers[name] }
          : { kind: 'error', code: outcome.errorCode },
        attempt,
        this.#options.retryPolicy,
        this.#now(),
        this.#options.random,
      );
      const fitsBudget = delay !== undefined && this.#now() + delay < deadline;
      if (!fitsBudget) {
        if ('status' in outcome) return outcome;
        throw new GatewayError('UpstreamUnreachable', `The upstream could not be reached (${outcome.errorCode ?? 'connection error'}).`, {
          cause: outcome.error,
        });
      }
      await this.#sleep(delay);
      waitedMs = delay;
    }
  }

  async #attempt(
    request: UpstreamRequest,
    target: Target,
    headers: Record<string, string>,
    remainingMs: number,
    signal: EventEmitter,
  ): Promise<UpstreamResponse> {
    const response = await this.#dispatcher.request({
      origin: target.origin,
      path: target.path,
      method: request.method as Dispatcher.HttpMethod,
      headers,
      body: request.body,
      signal,
      headersTimeout: remainingMs,
      bodyTimeout: remainingMs,
    });
    const limit = Math.min(this.#options.maxResponseBytes ?? 64 * 1024 * 1024, request.maxResponseBytes ?? Infinity);
    const bodyText = await readBody(response.body, limit);
    assertJsonDepth(bodyText, this.#options.maxJsonDepth ?? defaultMaxJsonDepth);
    return { status: response.statusCode, headers: flattenHeaders(response.headers), bodyText, attempts: 1 };
  }

  async close(): Promise<void> {
    await this.#dispatcher.close();
  }
}

/**
 * The body as text, refused past `limit` bytes so a runaway upstream cannot exhaust memory.
 * Read from the stream's events: an async iterator costs more per call than the body is worth.
 */
function readBody(body: Readable, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    body.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        body.destroy();
        reject(new GatewayError('UpstreamBadResponse', `The upstream answer exceeded ${limit} bytes.`));
        return;
      }
      chunks.push(chunk);
    });
    body.once('end', () => resolve(Buffer.concat(chunks, size).toString('utf8')));
    body.once('error', reject);
  });
}

/** UPSTREAM_MAX_JSON_DEPTH's default: far deeper than any resource nests, far from the stack's limit. */
export const defaultMaxJsonDepth = 128;

/** Refuses an answer that is JSON nested deeper than `maxDepth` (text that is not JSON is let through as text). */
function assertJsonDepth(bodyText: string, maxDepth: number): void {
  if (!/^\s*[[{]/.test(bodyText)) return;
  const depth = nestingDepth(bodyText, maxDepth);
  if (depth > maxDepth) {
    throw new GatewayError(
      'UpstreamBadResponse',
      `The upstream answered with JSON nested more than ${maxDepth} levels deep, which the app does not read (UPSTREAM_MAX_JSON_DEPTH).`,
    );
  }
}

function flattenHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return flat;
}

function isAbort(error: unknown): boolean {
  const name = (error as { name?: string } | undefined)?.name;
  const code = errorCodeOf(error);
  return (
    name === 'AbortError' || name === 'TimeoutError' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_ABORTED'
  );
}

function errorCodeOf(error: unknown): string | undefined {
  const direct = (error as { code?: unknown } | undefined)?.code;
  if (typeof direct === 'string') return direct;
  const cause = (error as { cause?: { code?: unknown } } | undefined)?.cause?.code;
  return typeof cause === 'string' ? cause : undefined;
}

function timeoutError(cause?: unknown): GatewayError {
  return new GatewayError('UpstreamTimeout', 'The upstream did not answer within the time budget.', { cause });
}

/**
 * No documented operation redirects. Passing a 3xx on would send the caller (and an SDK that
 * follows it, its token) wherever the upstream points; recording it would make a long-running
 * start look finished.
 */
export function refuseRedirect(response: UpstreamResponse): UpstreamResponse {
  if (response.status >= 300 && response.status < 400) {
    throw new GatewayError('UpstreamBadResponse', `The upstream answered ${response.status}, a redirect; the app neither follows nor passes on redirects.`);
  }
  return response;
}
