/**
 * The durable-style engine of the long-running calls (DESIGN.md section 4): it starts an
 * operation upstream once per request key, then advances it one claimed poll at a time until
 * a terminal state or its deadline. Every step is a read, a conditional write, and at most one
 * upstream call, so any instance can take the next step and a crashed one loses nothing.
 */
import { createHash, randomUUID } from 'node:crypto';
import { GatewayError } from '../errors';
import { redactSecrets } from '../http/redaction';
import { isTrustedUrl } from '../upstream/urlGuard';
import type { UpstreamClient, UpstreamResponse } from '../upstream/upstreamClient';
import { isUnfollowableAccept, movedPollUrlOf, pollingModeOf, pollIntervalMs, pollUrlOf, readPoll, type PollingMode, type PollIntervalPolicy, type PollReading, type UpstreamAnswer } from './lroRules';
import { isActive, type OrchestrationState, type RuntimeStatus } from './orchestrationState';
import type { OrchestrationStore, OrchestrationSummary, StoredState, SummaryPage, SummaryQuery } from './orchestrationStore';

export interface OrchestrationSettings {
  pollInterval: PollIntervalPolicy;
  /** How long an operation may run, by operationId; others get `defaultDeadlineMs`. */
  deadlineMs: Record<string, number>;
  defaultDeadlineMs: number;
  /** How long one instance holds a poll before another may take it. */
  claimMs: number;
  /** How long finished orchestrations are kept. */
  retentionMs: number;
  /** A start that never got its upstream answer (its instance died) fails after this. */
  pendingTimeoutMs: number;
  /** Polls run at once by one sweep. */
  concurrency: number;
}

export const defaultOrchestrationSettings: OrchestrationSettings = {
  pollInterval: { defaultMs: 60_000, floorMs: 1000, ceilingMs: 600_000 },
  deadlineMs: { ApiManagementService_MigrateToStv2: 240 * 60_000 },
  defaultDeadlineMs: 60 * 60_000,
  claimMs: 60_000,
  retentionMs: 7 * 24 * 3600_000,
  pendingTimeoutMs: 10 * 60_000,
  concurrency: 8,
};

export interface EngineDependencies {
  store: OrchestrationStore;
  upstream: UpstreamClient;
  settings: OrchestrationSettings;
  now: () => number;
  log: (line: string) => void;
  newId?: () => string;
}

export interface StartRequest {
  name: string;
  method: string;
  /** The upstream path and its forwarded query. */
  path: string;
  query: [string, string][];
  bodyText?: string;
  bodyValue?: unknown;
  /** The resource URL (the request URL), for a PUT's final GET. */
  resourceUrl: string;
  /**
   * Who acts upstream when that is the caller (passthrough): a digest of the caller's token.
   * Only the same caller's repeat is a duplicate, or another caller would be handed an
   * operation the upstream never authorised them for.
   */
  actor?: string;
}

/**
 * Who reads the upstream for a poll: the token to send, and in passthrough mode who it acts
 * for (see `actorOf`), since only the starter's own reads may drive its operation.
 */
export interface PollReader {
  token: string;
  actor?: string;
}

export type StartOutcome =
  | { kind: 'duplicate'; state: OrchestrationState }
  | { kind: 'final'; state: OrchestrationState; response: UpstreamResponse }
  | { kind: 'running'; state: OrchestrationState; response: UpstreamResponse };

export function requestKeyOf(request: Pick<StartRequest, 'method' | 'path' | 'query' | 'bodyText' | 'actor'>): string {
  const query = [...request.query].sort(([a], [b]) => a.localeCompare(b));
  return createHash('sha256')
    .update(JSON.stringify([request.method.toUpperCase(), request.path.toLowerCase(), query, request.bodyText ?? '', request.actor ?? '']))
    .digest('hex');
}

/** How long a duplicate start waits for the first one's upstream answer. */
const initialAnswerWaitMs = 5000;

function parseBody(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function answerOf(response: UpstreamResponse): UpstreamAnswer {
  return { status: response.status, headers: response.headers, body: parseBody(response.bodyText) };
}

export class OrchestrationEngine {
  readonly #deps: EngineDependencies;
  readonly #newId: () => string;

  constructor(deps: EngineDependencies) {
    this.#deps = deps;
    this.#newId = deps.newId ?? randomUUID;
  }

  get store(): OrchestrationStore {
    return this.#deps.store;
  }

  #iso(ms = this.#deps.now()): string {
    return new Date(ms).toISOString();
  }

  #log(fields: Record<string, unknown>): void {
    this.#deps.log(JSON.stringify({ event: 'orchestration', ...fields }));
  }

  /** The running orchestration that holds this request key, if any. */
  async #activeHolder(requestKey: string): Promise<{ state?: OrchestrationState; etag?: string }> {
    const holder = await this.#deps.store.keyHolder(requestKey);
    if (!holder) return {};
    const stored = await this.#deps.store.read(holder.id);
    return stored && isActive(stored.state) ? { state: stored.state } : { etag: holder.etag };
  }

  /**
   * Starts the operation upstream through `send`, unless the same request is already running:
   * then that orchestration is returned and the upstream sees nothing.
   */
  async start(request: StartRequest, send: () => Promise<UpstreamResponse>): Promise<StartOutcome> {
    const { store } = this.#deps;
    const requestKey = requestKeyOf(request);
    const running = await this.#activeHolder(requestKey);
    if (running.state) return { kind: 'duplicate', state: await this.#awaitInitialAnswer(running.state) };

    const now = this.#deps.now();
    let state: OrchestrationState = {
      id: this.#newId(),
      name: request.name,
      runtimeStatus: 'Pending',
      input: { method: request.method, path: request.path, query: request.query, body: redactSecrets(request.bodyValue) },
      requestKey,
      actor: request.actor,
      createdTime: this.#iso(now),
      lastUpdatedTime: this.#iso(now),
    };
    if (!(await store.create(state))) throw new GatewayError('Conflict', 'An orchestration with this id exists already.');
    const etag = await this.#claimRequestKey(requestKey, state.id);
    if (typeof etag === 'object') {
      await store.delete(state.id);
      return { kind: 'duplicate', state: await this.#awaitInitialAnswer(etag) };
    }

    let response: UpstreamResponse;
    try {
      response = await send();
    } catch (error) {
      const failure = error instanceof GatewayError ? { code: error.code, message: error.message } : { code: 'InternalError', message: 'The start failed.' };
      await this.#settle(state.id, this.#unlessFinished((current) => ({ ...current, runtimeStatus: 'Failed', failure })));
      throw error;
    }

    const answer = answerOf(response);
    if (isUnfollowableAccept(request.method, answer)) {
      const failure = { code: 'UpstreamBadResponse', message: 'The upstream accepted the operation (202) without a Location or Azure-AsyncOperation to follow it; its outcome cannot be known.' } as const;
      await this.#settle(state.id, this.#unlessFinished((current) => ({ ...current, runtimeStatus: 'Failed', initial: { status: response.status, body: redactSecrets(answer.body) }, failure })));
      throw new GatewayError(failure.code, failure.message, { headers: { 'x-orchestration-id': state.id } });
    }
    let mode = pollingModeOf(request.method, answer);
    let pollUrl = mode && pollUrlOf(mode, answer, request.resourceUrl);
    if (mode && pollUrl && !isTrustedUrl(pollUrl, this.#deps.upstream.baseUrl) && request.method.toUpperCase() === 'PUT') {
      // A PUT can still be followed on the resource itself, which is on our own upstream.
      mode = 'resource';
      pollUrl = request.resourceUrl;
    }
    const initial = { status: response.status, body: redactSecrets(answer.body) };
    if (!mode || !pollUrl) {
      state = await this.#settle(
        state.id,
        this.#unlessFinished((current) => ({
          ...current,
          runtimeStatus: response.status < 400 ? 'Completed' : 'Failed',
          initial,
          output: initial,
          customStatus: { upstreamState: response.status < 400 ? 'Succeeded' : 'Failed', lastReadStatus: response.status },
        })),
      );
      return { kind: 'final', state, response };
    }
    if (!isTrustedUrl(pollUrl, this.#deps.upstream.baseUrl)) {
      state = await this.#settle(
        state.id,
        this.#unlessFinished((current) => ({
          ...current,
          runtimeStatus: 'Failed',
          initial,
          failure: { code: 'UpstreamLinkRefused', message: 'The upstream asked to be polled on another origin; the app does not follow it.' },
        })),
      );
      return { kind: 'running', state, response };
    }
    const interval = pollIntervalMs(response.headers['retry-after'], this.#deps.settings.pollInterval);
    const deadline = this.#deps.settings.deadlineMs[request.name] ?? this.#deps.settings.defaultDeadlineMs;
    state = await this.#update(
      state.id,
      this.#unlessFinished((current) => ({
        ...current,
        runtimeStatus: 'Running',
        initial,
        customStatus: { upstreamState: 'InProgress', lastReadStatus: response.status },
        poll: { mode: mode!, url: pollUrl!, resourceUrl: request.resourceUrl, nextPollAt: now + interval, pollCount: 0, failedReads: 0, deadlineAt: now + deadline },
      })),
    );
    this.#log({ id: state.id, name: state.name, step: 'started', mode, nextPollInMs: interval });
    return { kind: 'running', state, response };
  }

  /**
   * A duplicate that arrives while the first start still waits for the upstream waits a little
   * too, so both callers get the same answer; past that it gets the orchestration as it is.
   */
  async #awaitInitialAnswer(state: OrchestrationState): Promise<OrchestrationState> {
    let current = state;
    for (let waited = 0; current.runtimeStatus === 'Pending' && !current.initial && waited < initialAnswerWaitMs; waited += 100) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      current = (await this.get(state.id)) ?? current;
    }
    return current;
  }

  /** Takes the request key; returns the running holder instead if there is one. */
  async #claimRequestKey(requestKey: string, id: string): Promise<true | OrchestrationState> {
    for (let attempt = 0; attempt < 3; attempt += 1) {
      if (await this.#deps.store.claimKey(requestKey, id)) return true;
      const holder = await this.#activeHolder(requestKey);
      if (holder.state) return holder.state;
      if (holder.etag && (await this.#deps.store.takeOverKey(requestKey, id, holder.etag))) return true;
    }
    throw new GatewayError('Conflict', 'The same request is being started concurrently; try again.');
  }

  /** Read-modify-write with the ETag, repeated if another instance wrote in between. */
  async #update(id: string, change: (state: OrchestrationState) => OrchestrationState): Promise<OrchestrationState> {
    for (let attempt = 0; attempt < 5; attempt += 1) {
      const stored = await this.#deps.store.read(id);
      if (!stored) throw new GatewayError('NotFound', `No orchestration ${id}.`);
      const next = { ...change(stored.state), lastUpdatedTime: this.#iso() };
      if (await this.#deps.store.replace(next, stored.etag)) return next;
    }
    throw new GatewayError('Conflict', `Orchestration ${id} kept changing; try again.`);
  }

  /**
   * A change that leaves an orchestration that ended meanwhile (a caller terminated it, another
   * instance settled it) as it is: an end is final, and a late poll never writes over it.
   */
  #unlessFinished(change: (state: OrchestrationState) => OrchestrationState): (state: OrchestrationState) => OrchestrationState {
    return (state) => (isActive(state) ? change(state) : state);
  }

  /** Ends an orchestration and frees its request key. */
  async #settle(id: string, change: (state: OrchestrationState) => OrchestrationState): Promise<OrchestrationState> {
    const settled = await this.#update(id, (current) => {
      const next = change(current);
      return next.poll ? { ...next, poll: { ...next.poll, claimedUntil: undefined } } : next;
    });
    await this.#deps.store.releaseKey(settled.requestKey, settled.id);
    this.#log({ id, name: settled.name, step: 'settled', runtimeStatus: settled.runtimeStatus, failure: settled.failure?.code });
    return settled;
  }

  async get(id: string): Promise<OrchestrationState | undefined> {
    return (await this.#deps.store.read(id))?.state;
  }

  /** Summaries only (from blob metadata): a listing never downloads documents. */
  async list(statuses?: readonly RuntimeStatus[]): Promise<OrchestrationSummary[]> {
    return (await this.#deps.store.list()).filter((summary) => !statuses || statuses.includes(summary.runtimeStatus));
  }

  /** One bounded page of summaries (see OrchestrationStore.query). */
  query(query: SummaryQuery): Promise<SummaryPage> {
    return this.#deps.store.query(query);
  }

  async terminate(id: string, reason: string): Promise<OrchestrationState> {
    const current = await this.get(id);
    if (!current) throw new GatewayError('NotFound', `No orchestration ${id}.`);
    if (!isActive(current)) return current;
    return this.#settle(id, (state) =>
      isActive(state) ? { ...state, runtimeStatus: 'Terminated', failure: { code: 'Terminated', message: reason.slice(0, 500) } } : state,
    );
  }

  /**
   * One step of one orchestration if one is due: a start that never got its answer, or a
   * deadline that passed, ends it (no upstream call, so no token is needed); otherwise, with a
   * reader, a due poll is claimed with a conditional write, the upstream read once, and what
   * was read recorded. Returns false when there was nothing to do here.
   */
  async advance(id: string, reader?: PollReader): Promise<boolean> {
    const stored = await this.#deps.store.read(id);
    if (!stored || !isActive(stored.state)) return false;
    const now = this.#deps.now();
    const { state } = stored;
    if (state.runtimeStatus === 'Pending') return this.#failStalePending(stored, now);
    const poll = state.poll;
    if (!poll) return false;
    if (now >= poll.deadlineAt) {
      await this.#settle(id, this.#unlessFinished((current) => ({
        ...current,
        runtimeStatus: 'Failed',
        failure: { code: 'DeadlineExceeded', message: `The operation did not end within its deadline of ${Math.round((poll.deadlineAt - Date.parse(current.createdTime)) / 60_000)} minutes.` },
      })));
      return true;
    }
    if (!reader || poll.nextPollAt > now || (poll.claimedUntil ?? 0) > now) return false;
    // Another caller's token is not used for this caller's operation (passthrough mode).
    if (state.actor !== undefined && state.actor !== reader.actor) return false;
    const token = reader.token;
    const claimed: OrchestrationState = { ...state, poll: { ...poll, claimedUntil: now + this.#deps.settings.claimMs }, lastUpdatedTime: this.#iso(now) };
    if (!(await this.#deps.store.replace(claimed, stored.etag))) return false;

    const reading = await this.#readUpstream(poll.mode, poll.url, state.input.method, token);
    await this.#record(id, reading, token);
    return true;
  }

  async #failStalePending(stored: StoredState, now: number): Promise<boolean> {
    if (now - Date.parse(stored.state.lastUpdatedTime) < this.#deps.settings.pendingTimeoutMs) return false;
    await this.#settle(stored.state.id, this.#unlessFinished((current) => ({
      ...current,
      runtimeStatus: 'Failed',
      failure: { code: 'StartInterrupted', message: 'The instance that started this operation stopped before the upstream answered; whether the upstream received it is unknown.' },
    })));
    return true;
  }

  async #readUpstream(mode: NonNullable<OrchestrationState['poll']>['mode'], url: string, method: string, token: string): Promise<PollReading & { answer?: UpstreamAnswer }> {
    try {
      const response = await this.#deps.upstream.send({ method: 'GET', url, token });
      const answer = answerOf(response);
      return { ...readPoll(mode, method, answer), answer };
    } catch (error) {
      if (error instanceof GatewayError && error.code === 'UpstreamLinkRefused') throw error;
      // Timeouts, resets and unreachable upstreams delay the poll; they never end the operation.
      return { kind: 'read-failed', status: error instanceof GatewayError ? error.status : 0 };
    }
  }

  async #record(id: string, reading: PollReading & { answer?: UpstreamAnswer }, token: string): Promise<void> {
    const now = this.#deps.now();
    const { pollInterval } = this.#deps.settings;
    const retryAfter = reading.answer?.headers['retry-after'];
    const lastPolledTime = this.#iso(now);

    if (reading.kind === 'succeeded') {
      const current = await this.get(id);
      let output = { status: reading.answer?.status ?? 200, body: redactSecrets(reading.answer?.body) };
      if (reading.needsFinalGet && current?.poll) {
        const final = await this.#readUpstream('resource', current.poll.resourceUrl, 'GET', token);
        if (final.kind !== 'succeeded' || !final.answer) return this.#record(id, { kind: 'read-failed', status: final.answer?.status ?? 0 }, token);
        output = { status: 200, body: redactSecrets(final.answer.body) };
      }
      await this.#settle(id, this.#unlessFinished((state) => ({ ...state, runtimeStatus: 'Completed', output, customStatus: { upstreamState: reading.state, lastReadStatus: reading.answer?.status, lastPolledTime } })));
      return;
    }
    if (reading.kind === 'failed') {
      const status = reading.status >= 400 ? reading.status : 400;
      await this.#settle(id, this.#unlessFinished((state) => ({
        ...state,
        runtimeStatus: 'Failed',
        output: { status, body: redactSecrets(reading.error) },
        customStatus: { upstreamState: reading.state, lastReadStatus: reading.status, lastPolledTime },
      })));
      return;
    }
    const failedRead = reading.kind === 'read-failed';
    await this.#update(id, (state) => {
      if (!isActive(state) || !state.poll) return state;
      const movedTo = reading.kind === 'running' && reading.answer ? this.#movedPollUrl(state.poll.mode, reading.answer) : undefined;
      const failedReads = failedRead ? state.poll.failedReads + 1 : 0;
      // A failed read waits as asked, or backs off: 2, 4, 8 … times the floor, capped.
      const backoff = failedRead ? Math.min(pollInterval.ceilingMs, pollInterval.floorMs * 2 ** failedReads) : 0;
      const wait = Math.max(pollIntervalMs(retryAfter, pollInterval), backoff);
      return {
        ...state,
        customStatus: {
          upstreamState: reading.kind === 'running' ? reading.state : (state.customStatus?.upstreamState ?? 'InProgress'),
          lastReadStatus: reading.kind === 'read-failed' ? reading.status : reading.answer?.status,
          lastPolledTime,
          ...(failedRead ? { message: `The status read failed (${reading.status || 'no answer'}); retrying.` } : {}),
        },
        poll: { ...state.poll, url: movedTo ?? state.poll.url, nextPollAt: now + wait, claimedUntil: undefined, pollCount: state.poll.pollCount + 1, failedReads },
      };
    });
  }

  /**
   * The newest poll URL a running answer names, if it is on our own upstream: a URL on another
   * origin is never read, so the one the app had is kept.
   */
  #movedPollUrl(mode: PollingMode, answer: UpstreamAnswer): string | undefined {
    const moved = movedPollUrlOf(mode, answer);
    return moved && isTrustedUrl(moved, this.#deps.upstream.baseUrl) ? moved : undefined;
  }

  /**
   * Advances every due orchestration, a few at a time, and purges finished ones past their
   * retention. Polls that fall due within `lookaheadMs` (the time until the timer's next run)
   * are waited for and made in this run, so the timer's period does not add to the upstream's
   * interval; none is made before its time. Without a token (passthrough mode: only callers
   * hold one) no poll is made, but deadlines, interrupted starts and retention still apply, as
   * they need no upstream call. Returns what it did, for the timer's log line.
   */
  async sweep(token: string | undefined, lookaheadMs = 0): Promise<{ due: number; polled: number; purged: number }> {
    const now = this.#deps.now();
    const { pendingTimeoutMs, retentionMs, concurrency } = this.#deps.settings;
    const summaries = await this.#deps.store.list();
    const pollDue = (summary: OrchestrationSummary) => token !== undefined && (summary.nextPollAt ?? 0) <= now + lookaheadMs;
    const pastDeadline = (summary: OrchestrationSummary) => summary.deadlineAt !== undefined && summary.deadlineAt <= now;
    const due = summaries
      .filter(
        (summary) =>
          (summary.runtimeStatus === 'Running' && (pollDue(summary) || pastDeadline(summary))) ||
          (summary.runtimeStatus === 'Pending' && now - Date.parse(summary.lastUpdatedTime) >= pendingTimeoutMs),
      )
      .sort((a, b) => (a.nextPollAt ?? 0) - (b.nextPollAt ?? 0));
    let polled = 0;
    const queue = [...due];
    const reader = token === undefined ? undefined : { token };
    const worker = async () => {
      for (let next = queue.shift(); next; next = queue.shift()) {
        const waitMs = pastDeadline(next) ? 0 : (next.nextPollAt ?? 0) - this.#deps.now();
        if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
        try {
          if (await this.advance(next.id, reader)) polled += 1;
        } catch (error) {
          this.#log({ id: next.id, step: 'poll-error', code: (error as GatewayError).code ?? 'InternalError' });
        }
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));

    const expired = summaries.filter((summary) => !['Pending', 'Running'].includes(summary.runtimeStatus) && now - Date.parse(summary.lastUpdatedTime) > retentionMs);
    for (const summary of expired) await this.#deps.store.delete(summary.id);
    return { due: due.length, polled, purged: expired.length };
  }
}
