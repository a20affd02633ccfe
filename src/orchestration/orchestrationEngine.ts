/**
 * The durable-style engine of the long-running calls: it starts an
 * operation upstream once per request key, advances it one claimed poll at a time until a
 * terminal state or its deadline, tells the targets named of its end, and purges it after the
 * retention. Every step is a read, a conditional write, and at most one upstream call, so any
 * instance can take the next step and a crashed one loses nothing.
 *
 * The pieces it drives are kept apart: the ARM rules (lroRules.ts), how a document changes
 * (transitions.ts), the index the poller reads instead of every document
 * (orchestrationIndex.ts), the outbox, its sender and the deliveries' scheduling (outbox.ts,
 * notificationSender.ts, notificationDispatcher.ts).
 */
import { createHash, randomUUID } from 'node:crypto';
import type { ContainerClient } from '@azure/storage-blob';
import { GatewayError } from '../errors';
import { StorageBudget } from '../storage/storageBudget';
import { redactSecrets } from '../http/redaction';
import { isTrustedUrl } from '../upstream/urlGuard';
import type { UpstreamClient, UpstreamResponse } from '../upstream/upstreamClient';
import { isUnfollowableAccept, movedPollUrlOf, pollingModeOf, pollUrlOf, readPoll, type PollingMode, type PollIntervalPolicy, type PollReading, type UpstreamAnswer } from './lroRules';
import { NotificationDispatcher } from './notificationDispatcher';
import type { NotificationSender } from './notificationSender';
import { expiryMarkerName, OrchestrationIndex, type ActiveEntry, type KeySchedule } from './orchestrationIndex';
import { isActive, type OrchestrationState } from './orchestrationState';
import { OrchestrationStore, type StoredState, type SummaryFilter, type SummaryPage, type SummaryQuery } from './orchestrationStore';
import type { OriginGatePolicy } from './originGate';
import { nextDeliveryAt, outboxHint, type OutboxPolicy } from './outbox';
import { afterRead, claimed, ended, running, scheduleOf, type Ending, type ReadOutcome } from './transitions';
import { currentTraceCarrier, recordOrchestrationEnd, tracePoll } from '../telemetry/hooks';
import { upstreamIdsOf } from '../telemetry/upstreamIds';

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
  /** Polls made at once by one sweep, and deliveries in flight at once in one instance. */
  concurrency: number;
  /** How long a start's own two first writes may take (a few storage budgets): see #takeKeyOrFindRunning. */
  startWritesMs: number;
  /** Most orchestrations whose deliveries one sweep makes. */
  deliveryBatch: number;
  /** Most targets one orchestration tells of its end (a duplicate start may add its own). */
  maxNotifyTargets: number;
  outbox: OutboxPolicy;
  /** Per receiver's origin: attempts at once, and the circuit that skips one failing (originGate.ts). */
  originGate: OriginGatePolicy;
  /** How long a poller run waits for the deliveries it started; slower ones are recorded after it. */
  deliveryWaitMs: number;
  /** Told of every orchestration's end (`NOTIFY_URL`). */
  notifyUrl?: string;
  /** The origins `x-gateway-notify` may name (`NOTIFY_ALLOWED_ORIGINS`), checked again at every delivery. */
  allowedOrigins: readonly string[];
  /** Most orchestrations one sweep purges, and the time a sweep may give purging and the janitor. */
  purgeBatch: number;
  housekeepingBudgetMs: number;
  /** How often the janitor walks every document (ms), and how many it reads per sweep. */
  janitorIntervalMs: number;
  janitorPageSize: number;
}

export const defaultOrchestrationSettings: OrchestrationSettings = {
  pollInterval: { defaultMs: 60_000, floorMs: 1000, ceilingMs: 600_000 },
  deadlineMs: { ApiManagementService_MigrateToStv2: 240 * 60_000 },
  defaultDeadlineMs: 60 * 60_000,
  claimMs: 60_000,
  retentionMs: 7 * 24 * 3600_000,
  pendingTimeoutMs: 10 * 60_000,
  concurrency: 8,
  startWritesMs: 30_000,
  deliveryBatch: 100,
  maxNotifyTargets: 10,
  allowedOrigins: [],
  outbox: { maxAttempts: 8, firstRetryMs: 5000, maxRetryMs: 10 * 60_000, claimMs: 60_000 },
  originGate: { perOriginConcurrency: 2, failuresToOpen: 3, coolDownMs: 60_000 },
  deliveryWaitMs: 1000,
  purgeBatch: 500,
  housekeepingBudgetMs: 5000,
  janitorIntervalMs: 60 * 60_000,
  janitorPageSize: 500,
};

export interface EngineDependencies {
  store: OrchestrationStore;
  index: OrchestrationIndex;
  upstream: UpstreamClient;
  /** Absent when no signing secret is configured: no target can then be named. */
  notifier?: Pick<NotificationSender, 'send'>;
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
   * Who acts upstream when that is the caller (passthrough): see `actorOf`. Only the same
   * caller's repeat is a duplicate, or another caller would be handed an operation the
   * upstream never authorised them for.
   */
  actor?: string;
  /** The app's base URL as the caller reached it (links, notification source). */
  appBase?: string;
  /** Where to tell of the end (`x-gateway-notify`), already checked against the allow-list. */
  notifyTargets?: string[];
  /** Who started it (the caller's most specific name): with ACCESS_POLICY, only they and admins see it. */
  startedBy?: string;
  /** Whether only the same starter's repeat is a duplicate (with ACCESS_POLICY: each caller's own). */
  duplicatesPerCaller?: boolean;
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

export interface SweepResult {
  durationMs: number;
  due: number;
  polled: number;
  /** Delivery attempts the run started (those still in flight at its end are recorded after it). */
  delivered: number;
  purged: number;
  reconciled: number;
  /** Documents the janitor looked at in this run (0 but for one run in many, see #janitorTurn). */
  janitorScanned: number;
}

/** Durable Functions' answer to terminating an instance that already ended: 410 Gone. */
function alreadyEnded(state: OrchestrationState): GatewayError {
  return new GatewayError(
    'OrchestrationEnded',
    `Orchestration ${state.id} already ended (${state.runtimeStatus}${state.endedTime ? ` at ${state.endedTime}` : ''}): there is nothing to terminate. Read its outcome with GET orchestrations/${state.id}.`,
    { target: 'id' },
  );
}

export function requestKeyOf(request: Pick<StartRequest, 'method' | 'path' | 'query' | 'bodyText' | 'actor' | 'startedBy' | 'duplicatesPerCaller'>): string {
  const query = [...request.query].sort(([a], [b]) => a.localeCompare(b));
  const starter = request.duplicatesPerCaller ? (request.startedBy ?? '') : '';
  return createHash('sha256')
    .update(JSON.stringify([request.method.toUpperCase(), request.path.toLowerCase(), query, request.bodyText ?? '', request.actor ?? '', starter]))
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

/** Runs `work` over `items`, `concurrency` at a time. */
async function eachLimited<T>(items: readonly T[], concurrency: number, work: (item: T) => Promise<void>): Promise<void> {
  const queue = [...items];
  const worker = async () => {
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) await work(next);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, queue.length) }, worker));
}

export class OrchestrationEngine {
  readonly #deps: EngineDependencies;
  readonly #newId: () => string;
  readonly #notifications: NotificationDispatcher;

  constructor(deps: EngineDependencies) {
    this.#deps = deps;
    this.#newId = deps.newId ?? randomUUID;
    this.#notifications = new NotificationDispatcher({ ...deps, write: (stored, change) => this.#write(stored, change) });
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

  // ---- Writing a document -------------------------------------------------------------

  /**
   * Applies `change` to a document read at `stored.etag`: one write when nobody wrote since,
   * else read, change and write again (a few times). No write when nothing changes.
   */
  async #write(stored: StoredState, change: (state: OrchestrationState) => OrchestrationState): Promise<StoredState> {
    let current: StoredState | undefined = stored;
    for (let attempt = 0; attempt < 5 && current; attempt += 1) {
      const next = change(current.state);
      if (next === current.state) return current;
      const etag = await this.#deps.store.replace(next, current.etag);
      if (etag !== undefined) return { state: next, etag };
      current = await this.#deps.store.read(stored.state.id);
    }
    if (!current) throw new GatewayError('NotFound', `No orchestration ${stored.state.id}.`);
    throw new GatewayError('Conflict', `Orchestration ${stored.state.id} kept changing; try again.`);
  }

  /** Ends an orchestration (unless it ended already), then updates the index: key, expiry, outbox. */
  async #end(stored: StoredState, ending: Ending): Promise<OrchestrationState> {
    const context = { notifyUrl: this.#deps.settings.notifyUrl, newId: this.#newId };
    const settled = await this.#write(stored, (state) => ended(state, ending, this.#deps.now(), context));
    await this.#indexEnded(settled.state);
    recordOrchestrationEnd(settled.state);
    this.#log({ id: settled.state.id, name: settled.state.name, step: 'settled', runtimeStatus: settled.state.runtimeStatus, failure: settled.state.failure?.code });
    return settled.state;
  }

  /**
   * The index of an orchestration that ended: its request key freed, its purge marked, its
   * outbox marked while deliveries remain. Idempotent: the sweep repeats it for an ended
   * orchestration still holding its key (an instance that died between the two).
   */
  async #indexEnded(state: OrchestrationState): Promise<void> {
    const { index, settings } = this.#deps;
    const endedAt = Date.parse(state.endedTime ?? state.lastUpdatedTime);
    const dueAt = nextDeliveryAt(state.deliveries);
    await Promise.all([
      index.releaseKey(state.requestKey, state.id),
      index.markExpiry(state.id, endedAt + settings.retentionMs),
      dueAt === undefined ? undefined : index.markOutbox(state.id, dueAt, outboxHint(state.deliveries)),
    ]);
  }

  // ---- Starting -----------------------------------------------------------------------

  /**
   * Starts the operation upstream through `send`, unless the same request is already running:
   * then that orchestration is returned and the upstream sees nothing. Two storage round trips
   * before the upstream call (the request key claimed and the document created at once) and
   * one after (the document and the key's schedule written at once), so the poll URL is durable
   * before the caller hears "accepted". `send` is handed the stored Pending document, so a
   * caller that cannot wait for the upstream (a chat command) can name the id at once.
   */
  async start(request: StartRequest, send: (pending: OrchestrationState) => Promise<UpstreamResponse>): Promise<StartOutcome> {
    const { store, index } = this.#deps;
    const requestKey = requestKeyOf(request);
    const now = this.#deps.now();
    const pending: OrchestrationState = {
      id: this.#newId(),
      name: request.name,
      runtimeStatus: 'Pending',
      input: { method: request.method, path: request.path, query: request.query, body: redactSecrets(request.bodyValue) },
      requestKey,
      actor: request.actor,
      startedBy: request.startedBy,
      appBase: request.appBase,
      notifyTargets: request.notifyTargets,
      traceContext: currentTraceCarrier(),
      createdTime: this.#iso(now),
      lastUpdatedTime: this.#iso(now),
    };
    const schedule: KeySchedule = { startedAt: now };
    const [claim, create] = await Promise.allSettled([index.claimKey(requestKey, pending.id, schedule), store.create(pending)]);
    if (claim.status === 'rejected' || create.status === 'rejected' || create.value === undefined) {
      // Undo what was done, best effort: the janitor and the stale-start rule cover the rest.
      await Promise.allSettled([store.delete(pending.id), claim.status === 'fulfilled' && claim.value !== undefined ? index.releaseKey(requestKey, pending.id) : undefined]);
      if (claim.status === 'rejected') throw claim.reason;
      if (create.status === 'rejected') throw create.reason;
      throw new GatewayError('Conflict', 'An orchestration with this id exists already.');
    }
    let keyEtag = claim.value;
    if (keyEtag === undefined) {
      const taken = await this.#takeKeyOrFindRunning(requestKey, pending.id, schedule);
      if ('running' in taken) {
        await store.delete(pending.id);
        return { kind: 'duplicate', state: await this.#joinDuplicate(taken.running, request.notifyTargets) };
      }
      keyEtag = taken.etag;
    }
    let stored: StoredState = { state: pending, etag: create.value };

    let response: UpstreamResponse;
    try {
      response = await send(pending);
    } catch (error) {
      const failure = error instanceof GatewayError ? { code: error.code, message: error.message } : { code: 'InternalError', message: 'The start failed.' };
      await this.#end(stored, { runtimeStatus: 'Failed', failure });
      throw error;
    }

    const answer = answerOf(response);
    const initial = { status: response.status, body: redactSecrets(answer.body), upstreamIds: upstreamIdsOf(response.headers) };
    if (isUnfollowableAccept(request.method, answer)) {
      const failure = { code: 'UpstreamBadResponse', message: 'The upstream accepted the operation (202) without a Location or Azure-AsyncOperation to follow it; its outcome cannot be known.' } as const;
      await this.#end(stored, { runtimeStatus: 'Failed', initial, failure });
      throw new GatewayError(failure.code, failure.message, { headers: { 'x-orchestration-id': pending.id } });
    }
    let mode = pollingModeOf(request.method, answer);
    let pollUrl = mode && pollUrlOf(mode, answer, request.resourceUrl);
    if (mode && pollUrl && !isTrustedUrl(pollUrl, this.#deps.upstream.baseUrl) && request.method.toUpperCase() === 'PUT') {
      // A PUT can still be followed on the resource itself, which is on our own upstream.
      mode = 'resource';
      pollUrl = request.resourceUrl;
    }
    if (!mode || !pollUrl) {
      const succeeded = response.status < 400;
      const state = await this.#end(stored, {
        runtimeStatus: succeeded ? 'Completed' : 'Failed',
        initial,
        output: initial,
        customStatus: { upstreamState: succeeded ? 'Succeeded' : 'Failed', lastReadStatus: response.status },
      });
      return { kind: 'final', state, response };
    }
    if (!isTrustedUrl(pollUrl, this.#deps.upstream.baseUrl)) {
      const failure = { code: 'UpstreamLinkRefused', message: 'The upstream asked to be polled on another origin; the app does not follow it.' };
      return { kind: 'running', state: await this.#end(stored, { runtimeStatus: 'Failed', initial, failure }), response };
    }
    const plan = { mode, url: pollUrl, resourceUrl: request.resourceUrl, retryAfter: response.headers['retry-after'], deadlineMs: this.#deps.settings.deadlineMs[request.name] ?? this.#deps.settings.defaultDeadlineMs };
    const started = running(stored.state, plan, initial, this.#deps.now(), this.#deps.settings.pollInterval);
    [stored] = await Promise.all([
      this.#write(stored, (state) => running(state, plan, initial, this.#deps.now(), this.#deps.settings.pollInterval)),
      index.scheduleKey(requestKey, pending.id, scheduleOf(started), keyEtag),
    ]);
    this.#log({ id: pending.id, name: request.name, step: 'started', mode, nextPollInMs: (stored.state.poll?.nextPollAt ?? now) - now });
    return { kind: 'running', state: stored.state, response };
  }

  /**
   * The request key is held by another orchestration: that one if it is running (the start is
   * a duplicate), else the key taken over. A start stuck Pending past `pendingTimeoutMs` (its
   * instance died before the upstream answered) is failed first, so it never blocks a retry.
   */
  async #takeKeyOrFindRunning(requestKey: string, id: string, schedule: KeySchedule): Promise<{ running: OrchestrationState } | { etag: string }> {
    const { store, index, settings } = this.#deps;
    for (let attempt = 0; attempt < 10; attempt += 1) {
      const holder = await index.keyHolder(requestKey);
      if (!holder) {
        const etag = await index.claimKey(requestKey, id, schedule);
        if (etag !== undefined) return { etag };
        continue;
      }
      const stored = await store.read(holder.id);
      if (!stored && this.#deps.now() - holder.writtenAt < settings.startWritesMs) {
        // The holder claimed the key and is still writing its document (the two writes go at
        // once): taking the key from a live start would send the same request twice. A start
        // that died between the two made no upstream call, so after the window it may go.
        await new Promise((resolve) => setTimeout(resolve, 100));
        continue;
      }
      if (stored && isActive(stored.state)) {
        if (!(await this.#failStalePending(stored, this.#deps.now()))) return { running: stored.state };
        continue;
      }
      const etag = await index.takeOverKey(requestKey, id, holder.etag, schedule);
      if (etag !== undefined) return { etag };
    }
    throw new GatewayError('Conflict', 'The same request is being started concurrently; try again.');
  }

  /**
   * A duplicate joins the running orchestration: the targets it names are told of the end too,
   * and while the first start still waits for the upstream, it waits a little as well, so both
   * callers get the same answer; past that it gets the orchestration as it is.
   */
  async #joinDuplicate(first: OrchestrationState, notifyTargets: readonly string[] = []): Promise<OrchestrationState> {
    let current = first;
    const room = Math.max(0, this.#deps.settings.maxNotifyTargets - (first.notifyTargets ?? []).length);
    const added = notifyTargets.filter((target) => !(first.notifyTargets ?? []).includes(target)).slice(0, room);
    if (added.length > 0) {
      const stored = await this.#deps.store.read(first.id);
      if (stored) {
        current = (await this.#write(stored, (state) => (isActive(state) ? { ...state, notifyTargets: [...(state.notifyTargets ?? []), ...added] } : state))).state;
      }
    }
    for (let waited = 0; current.runtimeStatus === 'Pending' && !current.initial && waited < initialAnswerWaitMs; waited += 100) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      current = (await this.get(first.id)) ?? current;
    }
    return current;
  }

  // ---- Reading, terminating, purging --------------------------------------------------

  async get(id: string): Promise<OrchestrationState | undefined> {
    return (await this.#deps.store.read(id))?.state;
  }

  /** One bounded page of summaries (see OrchestrationStore.query). */
  query(query: SummaryQuery): Promise<SummaryPage> {
    return this.#deps.store.query(query, this.#deps.now);
  }

  async terminate(id: string, reason: string): Promise<OrchestrationState> {
    const stored = await this.#deps.store.read(id);
    if (!stored) throw new GatewayError('NotFound', `No orchestration ${id}.`);
    if (!isActive(stored.state)) throw alreadyEnded(stored.state);
    const message = reason.slice(0, 500);
    const state = await this.#end(stored, { runtimeStatus: 'Terminated', failure: { code: 'Terminated', message } });
    // It may have ended another way between the read and the write: then this call changed nothing.
    if (state.runtimeStatus !== 'Terminated' || state.failure?.message !== message) throw alreadyEnded(state);
    return state;
  }

  /**
   * Removes an ended orchestration and everything the index holds of it; not while it runs,
   * nor while a notification of its end is still to be delivered (at least once means that).
   */
  async purge(id: string): Promise<'purged' | 'running' | 'notifying' | 'missing'> {
    const stored = await this.#deps.store.read(id);
    if (!stored) return 'missing';
    if (isActive(stored.state)) return 'running';
    if (nextDeliveryAt(stored.state.deliveries) !== undefined) return 'notifying';
    await this.#purgeEnded(stored.state);
    return 'purged';
  }

  async #purgeEnded(state: Pick<OrchestrationState, 'id' | 'requestKey' | 'endedTime' | 'lastUpdatedTime'>): Promise<void> {
    const { store, index, settings } = this.#deps;
    const endedAt = Date.parse(state.endedTime ?? state.lastUpdatedTime);
    await Promise.all([
      store.delete(state.id),
      index.clearOutbox(state.id),
      index.clearExpiry(expiryMarkerName(state.id, endedAt + settings.retentionMs)),
      index.releaseKey(state.requestKey, state.id),
    ]);
  }

  /**
   * Purges the ended orchestrations matching `filter`, within the bounds of one query (see
   * OrchestrationStore.query); the continuation token, when set, reads on to purge more.
   */
  async purgeMatching(filter: SummaryFilter, bounds: Omit<SummaryQuery, keyof SummaryFilter>): Promise<{ instancesDeleted: number; continuationToken?: string }> {
    const endedStatuses = ['Completed', 'Failed', 'Terminated'] as const;
    const statuses = (filter.statuses ?? endedStatuses).filter((status) => (endedStatuses as readonly string[]).includes(status));
    const page = await this.query({ ...filter, ...bounds, statuses });
    let instancesDeleted = 0;
    const deliveredAll = page.summaries.filter((summary) => summary.nextDeliveryAt === undefined);
    await eachLimited(deliveredAll, this.#deps.settings.concurrency, async (summary) => {
      if ((await this.purge(summary.id)) === 'purged') instancesDeleted += 1;
    });
    return { instancesDeleted, continuationToken: page.continuationToken };
  }

  // ---- Advancing ----------------------------------------------------------------------

  /**
   * One step of one orchestration if one is due: a start that never got its answer, or a
   * deadline that passed, ends it (no upstream call, so no token is needed); otherwise, with a
   * reader, a due poll is claimed with a conditional write, the upstream read once, and what
   * was read recorded. Returns false when there was nothing to do here.
   */
  async advance(id: string, reader?: PollReader, budgetEndsAt?: number): Promise<boolean> {
    const stored = await this.#deps.store.read(id);
    if (!stored || !isActive(stored.state)) return false;
    return this.#step(stored, reader, budgetEndsAt);
  }

  /**
   * `budgetEndsAt` bounds a poll made for a waiting caller: its reads get the time left, and
   * none is begun with less than a second left, so a wait never outlasts what it was given.
   */
  async #step(stored: StoredState, reader: PollReader | undefined, budgetEndsAt?: number): Promise<boolean> {
    const now = this.#deps.now();
    const { state } = stored;
    if (state.runtimeStatus === 'Pending') return this.#failStalePending(stored, now);
    const poll = state.poll;
    if (!poll) return false;
    if (now >= poll.deadlineAt) {
      const minutes = Math.round((poll.deadlineAt - Date.parse(state.createdTime)) / 60_000);
      await this.#end(stored, { runtimeStatus: 'Failed', failure: { code: 'DeadlineExceeded', message: `The operation did not end within its deadline of ${minutes} minutes.` } });
      return true;
    }
    if (!reader || poll.nextPollAt > now || (poll.claimedUntil ?? 0) > now) return false;
    if (budgetEndsAt !== undefined && budgetEndsAt - now < 1000) return false;
    // Another caller's token is not used for this caller's operation (passthrough mode).
    if (state.actor !== undefined && state.actor !== reader.actor) return false;
    const claimedState = claimed(state, now, this.#deps.settings.claimMs);
    const etag = await this.#deps.store.replace(claimedState, stored.etag);
    if (etag === undefined) return false;
    const timeoutMs = budgetEndsAt === undefined ? undefined : budgetEndsAt - now;
    // The poll's read and what it records are one span, linked to the start (src/telemetry).
    await tracePoll(state, now, async () => this.#record({ state: claimedState, etag }, await this.#readUpstream(poll.mode, poll.url, state.input.method, reader.token, timeoutMs), reader.token, budgetEndsAt));
    return true;
  }

  async #failStalePending(stored: StoredState, now: number): Promise<boolean> {
    if (stored.state.runtimeStatus !== 'Pending' || now - Date.parse(stored.state.createdTime) < this.#deps.settings.pendingTimeoutMs) return false;
    await this.#end(stored, {
      runtimeStatus: 'Failed',
      failure: { code: 'StartInterrupted', message: 'The instance that started this operation stopped before the upstream answered; whether the upstream received it is unknown.' },
    });
    return true;
  }

  async #readUpstream(mode: PollingMode, url: string, method: string, token: string, timeoutMs?: number): Promise<PollReading & { answer?: UpstreamAnswer }> {
    try {
      // A status is small; a runaway answer must not be held (8 polls run at once).
      const response = await this.#deps.upstream.send({ method: 'GET', url, token, maxResponseBytes: 8 * 1024 * 1024, timeoutMs });
      const answer = answerOf(response);
      return { ...readPoll(mode, method, answer), answer };
    } catch (error) {
      if (error instanceof GatewayError && error.code === 'UpstreamLinkRefused') throw error;
      // Timeouts, resets and unreachable upstreams delay the poll; they never end the operation.
      return { kind: 'read-failed', status: error instanceof GatewayError ? error.status : 0 };
    }
  }

  async #record(stored: StoredState, reading: PollReading & { answer?: UpstreamAnswer }, token: string, budgetEndsAt?: number): Promise<void> {
    const lastPolledTime = this.#iso();
    if (reading.kind === 'succeeded') {
      let output = { status: reading.answer?.status ?? 200, body: redactSecrets(reading.answer?.body) };
      if (reading.needsFinalGet && stored.state.poll) {
        const timeoutMs = budgetEndsAt === undefined ? undefined : Math.max(1, budgetEndsAt - this.#deps.now());
        const final = await this.#readUpstream('resource', stored.state.poll.resourceUrl, 'GET', token, timeoutMs);
        if (final.kind === 'failed') return this.#record(stored, final, token);
        if (final.kind !== 'succeeded' || !final.answer) return this.#record(stored, { kind: 'read-failed', status: final.answer?.status ?? 0 }, token);
        output = { status: 200, body: redactSecrets(final.answer.body) };
      }
      await this.#end(stored, { runtimeStatus: 'Completed', output, customStatus: { upstreamState: reading.state, lastReadStatus: reading.answer?.status, lastPolledTime } });
      return;
    }
    if (reading.kind === 'failed') {
      const status = reading.status >= 400 ? reading.status : 400;
      await this.#end(stored, {
        runtimeStatus: 'Failed',
        output: { status, body: redactSecrets(reading.error) },
        customStatus: { upstreamState: reading.state, lastReadStatus: reading.status, lastPolledTime },
      });
      return;
    }
    const answer = reading.answer;
    const outcome: ReadOutcome = {
      ...reading,
      retryAfter: answer?.headers['retry-after'],
      answerStatus: answer?.status,
      movedTo: reading.kind === 'running' && answer && stored.state.poll ? this.#movedPollUrl(stored.state.poll.mode, answer) : undefined,
    };
    const next = await this.#write(stored, (state) => afterRead(state, outcome, this.#deps.now(), this.#deps.settings.pollInterval));
    if (isActive(next.state)) await this.#deps.index.scheduleKey(next.state.requestKey, next.state.id, scheduleOf(next.state));
  }

  /**
   * The newest poll URL a running answer names, if it is on our own upstream: a URL on another
   * origin is never read, so the one the app had is kept.
   */
  #movedPollUrl(mode: PollingMode, answer: UpstreamAnswer): string | undefined {
    const moved = movedPollUrlOf(mode, answer);
    return moved && isTrustedUrl(moved, this.#deps.upstream.baseUrl) ? moved : undefined;
  }

  // ---- Notifying ----------------------------------------------------------------------

  /** Makes the due deliveries of one ended orchestration and waits for them (see NotificationDispatcher). */
  deliver(id: string): Promise<number> {
    return this.#notifications.deliver(id);
  }

  /** Resolves once no delivery this instance started is in flight. */
  deliveriesSettled(): Promise<void> {
    return this.#notifications.idle();
  }

  // ---- The poller's run -----------------------------------------------------------------

  /**
   * One run of the poller, costing what is due rather than what is stored: it lists the active
   * orchestrations from the index (never the ended ones), advances those due, starts the due
   * notifications (waiting for them at most `deliveryWaitMs`), purges what passed its retention
   * in a bounded batch, and gives the janitor its turn, the last three within `housekeepingBudgetMs`.
   *
   * Polls that fall due within `lookaheadMs` (the time until the timer's next run) are waited
   * for and made in this run, so the timer's period does not add to the upstream's interval;
   * none is made before its time. Without a token (passthrough mode: only callers hold one) no
   * poll is made, but deadlines, interrupted starts, notifications and retention still apply,
   * as they need no upstream call.
   */
  async sweep(token: string | undefined, lookaheadMs = 0): Promise<SweepResult> {
    const { index, settings } = this.#deps;
    const startedAt = this.#deps.now();
    const reader = token === undefined ? undefined : { token };
    const result: SweepResult = { durationMs: 0, due: 0, polled: 0, delivered: 0, purged: 0, reconciled: 0, janitorScanned: 0 };
    // A new deployment's poller may run before any start has made the container.
    await this.#deps.store.ensureReady();

    const due = (await index.listActive()).filter((entry) => this.#isDue(entry, startedAt, reader ? lookaheadMs : undefined));
    due.sort((a, b) => (a.nextPollAt ?? 0) - (b.nextPollAt ?? 0));
    result.due = due.length;
    await eachLimited(due, settings.concurrency, async (entry) => {
      const pastDeadline = entry.deadlineAt !== undefined && entry.deadlineAt <= this.#deps.now();
      const waitMs = pastDeadline ? 0 : (entry.nextPollAt ?? 0) - this.#deps.now();
      if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
      try {
        const outcome = await this.#sweepActive(entry, reader);
        if (outcome === 'stepped') result.polled += 1;
        if (outcome === 'reconciled') result.reconciled += 1;
      } catch (error) {
        this.#log({ id: entry.id, step: 'poll-error', code: (error as GatewayError).code ?? 'InternalError' });
      }
    });

    // Deliveries, purges and the janitor share one budget: a backlog of any waits for the next run.
    // Deliveries are started, not awaited: a run waits for them at most `deliveryWaitMs`.
    const housekeepingEndsAt = this.#deps.now() + settings.housekeepingBudgetMs;
    try {
      result.delivered = await this.#notifications.run(housekeepingEndsAt);
    } catch (error) {
      this.#log({ step: 'delivery-error', code: (error as GatewayError).code ?? 'InternalError' });
    }

    result.purged = await this.#purgeExpired(housekeepingEndsAt);
    if (this.#deps.now() < housekeepingEndsAt) {
      const janitor = await this.#janitorTurn();
      result.reconciled += janitor.repaired;
      result.janitorScanned = janitor.scanned;
    }
    result.durationMs = this.#deps.now() - startedAt;
    return result;
  }

  /**
   * Whether an active entry needs this run: a poll due (within the lookahead, with a reader),
   * a deadline passed, a start pending too long, or a key written before its schedule was kept.
   */
  #isDue(entry: ActiveEntry, now: number, lookaheadMs: number | undefined): boolean {
    if (!entry.id) return true;
    if (entry.deadlineAt !== undefined && entry.deadlineAt <= now) return true;
    if (entry.nextPollAt === undefined) return now - (entry.startedAt ?? 0) >= this.#deps.settings.pendingTimeoutMs;
    return lookaheadMs !== undefined && entry.nextPollAt <= now + lookaheadMs;
  }

  async #sweepActive(entry: ActiveEntry, reader: PollReader | undefined): Promise<'stepped' | 'reconciled' | undefined> {
    const { store, index } = this.#deps;
    const id = entry.id || (await index.keyHolder(entry.requestKey))?.id;
    if (!id) return undefined;
    const stored = await store.read(id);
    if (!stored) {
      // A start whose instance died before its document was written: nothing reached the upstream.
      if (this.#deps.now() - (entry.startedAt ?? 0) >= this.#deps.settings.pendingTimeoutMs) await index.releaseKey(entry.requestKey, id);
      return undefined;
    }
    if (!isActive(stored.state)) {
      await this.#indexEnded(stored.state);
      return 'reconciled';
    }
    // A key written before its schedule was (an older version, or a start whose second write failed).
    if ((!entry.id || entry.nextPollAt === undefined) && stored.state.poll) await index.scheduleKey(entry.requestKey, id, scheduleOf(stored.state));
    return (await this.#step(stored, reader)) ? 'stepped' : undefined;
  }

  /** Purges what passed its retention, oldest first, in one bounded batch within the budget. */
  async #purgeExpired(endsAt: number): Promise<number> {
    const { store, index, settings } = this.#deps;
    const expired = await index.expired(this.#deps.now(), settings.purgeBatch);
    let purged = 0;
    await eachLimited(expired, settings.concurrency, async (entry) => {
      if (this.#deps.now() >= endsAt) return;
      await Promise.all([store.delete(entry.id), index.clearOutbox(entry.id)]);
      await index.clearExpiry(entry.marker);
      purged += 1;
    });
    return purged;
  }

  /**
   * The janitor's turn, at most once per `janitorIntervalMs` for the whole store: one page of
   * documents checked against the index. It repairs what a crash between two writes left (a
   * document that ended with its outbox unmarked, a start that died holding no key) and what
   * was stored before the index existed (purging ended documents past their retention directly).
   */
  async #janitorTurn(): Promise<{ scanned: number; repaired: number }> {
    const { store, index, settings } = this.#deps;
    const now = this.#deps.now();
    const turn = await index.claimJanitor(now, settings.claimMs);
    if (!turn) return { scanned: 0, repaired: 0 };
    const page = await store.listPage(turn.marker, settings.janitorPageSize);
    let repaired = 0;
    await eachLimited(page.summaries, settings.concurrency, async (summary) => {
      const active = summary.runtimeStatus === 'Pending' || summary.runtimeStatus === 'Running';
      if (!active) {
        const endedAt = Date.parse(summary.endedTime ?? summary.lastUpdatedTime);
        if (endedAt + settings.retentionMs <= now) {
          await this.#purgeEnded({ ...summary, requestKey: summary.requestKey ?? '' });
          repaired += 1;
        } else if (summary.nextDeliveryAt !== undefined) {
          await index.markOutbox(summary.id, summary.nextDeliveryAt);
        }
        return;
      }
      const stored = await store.read(summary.id);
      if (!stored || !isActive(stored.state)) return;
      const holder = await index.keyHolder(stored.state.requestKey);
      if (holder?.id === summary.id) return;
      if (await this.#failStalePending(stored, now)) repaired += 1;
      else if (!holder && stored.state.runtimeStatus === 'Running' && (await index.claimKey(stored.state.requestKey, summary.id, scheduleOf(stored.state)))) repaired += 1;
    });
    await index.saveJanitor(page.marker, page.marker ? now : now + settings.janitorIntervalMs, turn.etag);
    return { scanned: page.summaries.length, repaired };
  }
}

/** An engine whose documents and index live in one blob container, under one storage budget. */
export function engineOnContainer(container: ContainerClient, dependencies: Omit<EngineDependencies, 'store' | 'index'> & { storageTimeoutMs: number }): OrchestrationEngine {
  const budget = new StorageBudget(dependencies.storageTimeoutMs, 'Orchestration storage');
  const settings = { ...dependencies.settings, startWritesMs: 3 * dependencies.storageTimeoutMs };
  return new OrchestrationEngine({ ...dependencies, settings, store: new OrchestrationStore(container, budget), index: new OrchestrationIndex(container, budget) });
}
