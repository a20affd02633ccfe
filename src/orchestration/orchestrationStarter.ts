/**
 * Starting an orchestration: the request key claimed and the document created before anything
 * goes upstream (so a crash or a duplicate never strands or repeats work), the upstream called
 * once, and its answer recorded before the caller hears it (so the poll URL is durable before
 * "accepted"). A repeat of a running start joins it instead.
 */
import { createHash } from 'node:crypto';
import { GatewayError } from '../errors';
import { redactSecrets } from '../rules/redaction';
import { currentTraceCarrier } from '../telemetry/hooks';
import { upstreamIdsOf } from '../telemetry/upstreamIds';
import { withStorageAttempts } from '../storage/storageBudget';
import { isTrustedUrl } from '../upstream/urlGuard';
import type { UpstreamResponse } from '../upstream/upstreamClient';
import type { EngineDependencies, StartOutcome, StartRequest } from './engineSettings';
import { isUnfollowableAccept, pollingModeOf, pollUrlOf, resultUrlOf, type UpstreamAnswer } from './lroRules';
import type { KeySchedule } from './orchestrationIndex';
import type { OrchestrationRecords } from './orchestrationRecords';
import { isActive, type OrchestrationState } from './orchestrationState';
import type { StoredState } from './orchestrationStore';
import { answerOf } from './upstreamAnswer';
import { running, scheduleOf, type Ending } from './transitions';

export function requestKeyOf(request: Pick<StartRequest, 'method' | 'path' | 'query' | 'bodyText' | 'actor' | 'startedBy' | 'duplicatesPerCaller'>): string {
  const query = [...request.query].sort(([a], [b]) => a.localeCompare(b));
  const starter = request.duplicatesPerCaller ? (request.startedBy ?? '') : '';
  return createHash('sha256')
    .update(JSON.stringify([request.method.toUpperCase(), request.path.toLowerCase(), query, request.bodyText ?? '', request.actor ?? '', starter]))
    .digest('hex');
}

/** How long a duplicate start waits for the first one's upstream answer. */
const initialAnswerWaitMs = 5000;

export class OrchestrationStarter {
  constructor(
    private readonly deps: Pick<EngineDependencies, 'store' | 'index' | 'upstream' | 'settings' | 'now'> & { newId: () => string },
    private readonly records: OrchestrationRecords,
  ) {}

  /**
   * Starts the operation upstream through `send`, unless the same request is already running:
   * then that orchestration is returned and the upstream sees nothing. Two storage round trips
   * before the upstream call (the request key claimed and the document created at once) and
   * one after (the document and the key's schedule written at once), so the poll URL is durable
   * before the caller hears "accepted". `send` is handed the stored Pending document, so a
   * caller that cannot wait for the upstream (a chat command) can name the id at once.
   */
  async start(request: StartRequest, send: (pending: OrchestrationState) => Promise<UpstreamResponse>): Promise<StartOutcome> {
    const { store, index } = this.deps;
    const requestKey = requestKeyOf(request);
    const now = this.deps.now();
    const pending: OrchestrationState = {
      id: this.deps.newId(),
      name: request.name,
      runtimeStatus: 'Pending',
      input: { method: request.method, path: request.path, query: request.query, body: redactSecrets(request.bodyValue) },
      requestKey,
      actor: request.actor,
      startedBy: request.startedBy,
      appBase: request.appBase,
      notifyTargets: request.notifyTargets,
      traceContext: currentTraceCarrier(),
      createdTime: this.records.iso(now),
      lastUpdatedTime: this.records.iso(now),
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
      // A start refused here (the key could not be had, storage failed) never reached the
      // upstream: its document goes, rather than be failed later as interrupted.
      const taken = await this.#takeKeyOrFindRunning(requestKey, pending.id, schedule).catch(async (error: unknown) => {
        await store.delete(pending.id).catch(() => undefined);
        throw error;
      });
      if ('running' in taken) {
        await store.delete(pending.id);
        return { kind: 'duplicate', state: await this.#joinDuplicate(taken.running, request.notifyTargets) };
      }
      keyEtag = taken.etag;
    }
    let stored: StoredState = { state: pending, etag: create.value };

    let response: UpstreamResponse;
    let answer: UpstreamAnswer;
    let initial: NonNullable<OrchestrationState['initial']>;
    // The answer is read in the same try as the call: whatever fails there, the start is
    // recorded as failed, never left Pending with the upstream having acted.
    try {
      response = await send(pending);
      answer = answerOf(response);
      initial = { status: response.status, body: redactSecrets(answer.body), upstreamIds: upstreamIdsOf(response.headers) };
    } catch (error) {
      const failure = error instanceof GatewayError ? { code: error.code, message: error.message } : { code: 'InternalError', message: 'The start failed.' };
      await this.#end(stored, { runtimeStatus: 'Failed', failure }, keyEtag);
      throw error;
    }

    if (isUnfollowableAccept(request.method, answer)) {
      const failure = { code: 'UpstreamBadResponse', message: 'The upstream accepted the operation (202) without a Location or Azure-AsyncOperation to follow it; its outcome cannot be known.' } as const;
      await this.#end(stored, { runtimeStatus: 'Failed', initial, failure }, keyEtag);
      throw new GatewayError(failure.code, failure.message, { headers: { 'x-orchestration-id': pending.id } });
    }
    let mode = pollingModeOf(request.method, answer);
    let pollUrl = mode && pollUrlOf(mode, answer, request.resourceUrl);
    if (mode && pollUrl && !isTrustedUrl(pollUrl, this.deps.upstream.baseUrl) && request.method.toUpperCase() === 'PUT') {
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
      }, keyEtag);
      return { kind: 'final', state, response };
    }
    if (!isTrustedUrl(pollUrl, this.deps.upstream.baseUrl)) {
      const failure = { code: 'UpstreamLinkRefused', message: 'The upstream asked to be polled on another origin; the app does not follow it.' };
      return { kind: 'running', state: await this.#end(stored, { runtimeStatus: 'Failed', initial, failure }, keyEtag), response };
    }
    // A result on another origin is not read: the status body is then the output, as before.
    const resultUrl = resultUrlOf(request.method, mode, answer);
    const plan = { mode, url: pollUrl, resourceUrl: request.resourceUrl, resultUrl: resultUrl && isTrustedUrl(resultUrl, this.deps.upstream.baseUrl) ? resultUrl : undefined, retryAfter: response.headers['retry-after'], deadlineMs: this.deps.settings.deadlineMs[request.name] ?? this.deps.settings.defaultDeadlineMs };
    const started = running(stored.state, plan, initial, this.deps.now(), this.deps.settings.pollInterval);
    // A try whose answer was lost may have landed: the next finds the document Running with
    // this answer already (only this start moves it from Pending) and leaves it as it is.
    const toRunning = (state: OrchestrationState) => (state.runtimeStatus === 'Running' && state.initial ? state : running(state, plan, initial, this.deps.now(), this.deps.settings.pollInterval));
    const accepted = stored;
    [stored] = await Promise.all([
      this.#recorded(() => this.records.write(accepted, toRunning)),
      this.#recorded(() => index.scheduleKey(requestKey, pending.id, scheduleOf(started), keyEtag)),
    ]);
    this.records.log({ id: pending.id, name: request.name, step: 'started', mode, nextPollInMs: (stored.state.poll?.nextPollAt ?? now) - now });
    return { kind: 'running', state: stored.state, response };
  }

  /** Ends the start's orchestration with what the upstream answered, tried again as any record of it. */
  #end(stored: StoredState, ending: Ending, keyEtag: string | undefined): Promise<OrchestrationState> {
    return this.#recorded(() => this.records.end(stored, ending, keyEtag));
  }

  /**
   * A write of what the upstream answered, tried again on a transient storage failure
   * (`startRecordAttempts` in all, each within the storage budget): the upstream has acted, so
   * a lost write would answer the caller 503 while the operation runs, and leave the document
   * Pending for the janitor to fail as `StartInterrupted`. Every such write is safe to repeat:
   * conditioned on the document's ETag and idempotent (an ending, or the change to Running,
   * leaves a document that has it already as it is; the key's schedule re-reads the key).
   */
  #recorded<T>(write: () => Promise<T>): Promise<T> {
    return withStorageAttempts(this.deps.settings.startRecordAttempts, write);
  }

  /**
   * The request key is held by another orchestration: that one if it is running (the start is
   * a duplicate), else the key taken over. A start stuck Pending past `pendingTimeoutMs` (its
   * instance died before the upstream answered) is failed first, so it never blocks a retry.
   */
  async #takeKeyOrFindRunning(requestKey: string, id: string, schedule: KeySchedule): Promise<{ running: OrchestrationState } | { etag: string }> {
    const { store, index, settings } = this.deps;
    for (let attempt = 0; attempt < 10; attempt += 1) {
      const holder = await index.keyHolder(requestKey);
      if (!holder) {
        const etag = await index.claimKey(requestKey, id, schedule);
        if (etag !== undefined) return { etag };
        continue;
      }
      const stored = await store.read(holder.id);
      if (!stored && holder.ageMs < settings.startWritesMs) {
        // The holder claimed the key and is still writing its document (the two writes go at
        // once): taking the key from a live start would send the same request twice. A start
        // that died between the two made no upstream call, so after the window it may go.
        await new Promise((resolve) => setTimeout(resolve, 100));
        continue;
      }
      if (stored && isActive(stored.state)) {
        if (!(await this.records.failStalePending(stored, this.deps.now()))) return { running: stored.state };
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
    const room = Math.max(0, this.deps.settings.maxNotifyTargets - (first.notifyTargets ?? []).length);
    const added = notifyTargets.filter((target) => !(first.notifyTargets ?? []).includes(target)).slice(0, room);
    if (added.length > 0) {
      const stored = await this.deps.store.read(first.id);
      if (stored) {
        current = (await this.records.write(stored, (state) => (isActive(state) ? { ...state, notifyTargets: [...(state.notifyTargets ?? []), ...added] } : state))).state;
      }
    }
    for (let waited = 0; current.runtimeStatus === 'Pending' && !current.initial && waited < initialAnswerWaitMs; waited += 100) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      current = (await this.deps.store.read(first.id))?.state ?? current;
    }
    return current;
  }
}
