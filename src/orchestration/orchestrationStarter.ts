/**
 * Starting an orchestration: the request key claimed and the document created before anything
 * goes upstream (so a crash or a duplicate never strands or repeats work), the upstream called
 * once, and its answer recorded before the caller hears it (so the poll URL is durable before
 * "accepted"). A repeat of a running start joins it instead.
 */
import { createHash } from 'node:crypto';
import { GatewayError } from '../errors';
import { redactSecrets } from '../rules';
import { currentTraceCarrier } from '../telemetry';
import type { UpstreamResponse } from '../upstream';
import type { EngineDependencies, HeldOutcome, StartOutcome, StartRequest } from './engineSettings';
import type { KeySchedule } from './orchestrationIndex';
import type { OrchestrationRecords } from './orchestrationRecords';
import { isActive, type OrchestrationState } from './orchestrationState';
import type { StoredState } from './orchestrationStore';
import type { StartRecorder } from './startAnswers';

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
    private readonly deps: Pick<EngineDependencies, 'store' | 'index' | 'upstream' | 'settings' | 'now' | 'holds'> & { newId: () => string },
    private readonly records: OrchestrationRecords,
    private readonly recorder: StartRecorder,
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
    const opened = await this.#open(this.#pendingOf(request), { startedAt: this.deps.now() }, request.notifyTargets);
    if ('duplicate' in opened) return { kind: 'duplicate', state: opened.duplicate };
    const { stored, keyEtag } = opened;
    return this.recorder.sendAndRecord(stored, request, () => send(stored.state), keyEtag);
  }

  /**
   * Stores a start held instead of sent (heldStarts.ts): the same two writes as a start's first
   * (the request key, with the schedule its rules give, and the document), so a repeat joins it
   * as a duplicate; the upstream sees nothing. `held` is what its send needs later, `customStatus`
   * what holds it; `logged`, what the log line says of why.
   */
  async hold(
    request: StartRequest,
    held: NonNullable<OrchestrationState['heldStart']>,
    customStatus: NonNullable<OrchestrationState['customStatus']>,
    logged: Record<string, unknown>,
  ): Promise<StartOutcome | HeldOutcome> {
    const pending: OrchestrationState = { ...this.#pendingOf(request), customStatus, heldStart: held };
    const schedule = this.deps.holds?.scheduleOf(pending);
    if (!schedule) throw new GatewayError('InternalError', 'Starts cannot be held here: the engine was built without hold rules.');
    const opened = await this.#open(pending, schedule, request.notifyTargets);
    if ('duplicate' in opened) return { kind: 'duplicate', state: opened.duplicate };
    this.records.log({ id: pending.id, name: request.name, step: 'held', ...logged });
    return { kind: 'waiting', state: opened.stored.state };
  }

  #pendingOf(request: StartRequest): OrchestrationState {
    const now = this.deps.now();
    return {
      id: request.id ?? this.deps.newId(),
      name: request.name,
      runtimeStatus: 'Pending',
      input: { method: request.method, path: request.path, query: request.query, body: redactSecrets(request.bodyValue) },
      requestKey: requestKeyOf(request),
      actor: request.actor,
      startedBy: request.startedBy,
      appBase: request.appBase,
      notifyTargets: request.notifyTargets,
      ...(request.restartedFrom ? { restartedFrom: request.restartedFrom } : {}),
      traceContext: currentTraceCarrier(),
      createdTime: this.records.iso(now),
      lastUpdatedTime: this.records.iso(now),
    };
  }

  /** The request key claimed and the document created at once; or the running orchestration a duplicate joins. */
  async #open(
    pending: OrchestrationState,
    schedule: KeySchedule,
    notifyTargets: string[] | undefined,
  ): Promise<{ stored: StoredState; keyEtag: string } | { duplicate: OrchestrationState }> {
    const { store, index } = this.deps;
    const { requestKey } = pending;
    const [claim, create] = await Promise.allSettled([index.claimKey(requestKey, pending.id, schedule), store.create(pending)]);
    if (claim.status === 'rejected' || create.status === 'rejected' || create.value === undefined) {
      // Undo what was done, best effort: the janitor and the stale-start rule cover the rest.
      await Promise.allSettled([
        store.delete(pending.id),
        claim.status === 'fulfilled' && claim.value !== undefined ? index.releaseKey(requestKey, pending.id) : undefined,
      ]);
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
        return { duplicate: await this.#joinDuplicate(taken.running, notifyTargets) };
      }
      keyEtag = taken.etag;
    }
    return { stored: { state: pending, etag: create.value }, keyEtag };
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
        current = (
          await this.records.write(stored, (state) => (isActive(state) ? { ...state, notifyTargets: [...(state.notifyTargets ?? []), ...added] } : state))
        ).state;
      }
    }
    // A start waiting for approval has no answer coming: it is joined as it is.
    for (let waited = 0; current.runtimeStatus === 'Pending' && !current.initial && !current.heldStart && waited < initialAnswerWaitMs; waited += 100) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      current = (await this.deps.store.read(first.id))?.state ?? current;
    }
    return current;
  }
}
