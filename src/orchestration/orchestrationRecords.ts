/**
 * How every part of the engine changes a document and keeps the index in step with it: a
 * conditional write that retries on a conflict, an ending (the document, then its index
 * entries), and a purge. Shared by the starter, the stepper, the sweeper and the janitor, so
 * an orchestration ends the same way whoever ends it.
 */
import { recordOrchestrationEnd } from '../telemetry';
import { GatewayError } from '../errors';
import type { EngineDependencies } from './engineSettings';
import { expiryMarkerName } from './orchestrationIndex';
import { isActive, type OrchestrationState } from './orchestrationState';
import type { StoredState } from './orchestrationStore';
import { StateCache } from './stateCache';
import { nextDeliveryAt, outboxHint } from './outbox';
import { ended, type Ending } from './transitions';

export type RecordsDependencies = Pick<EngineDependencies, 'store' | 'index' | 'settings' | 'now' | 'log' | 'holds'> & { newId: () => string };

export class OrchestrationRecords {
  /** What this instance last wrote of each active orchestration (see StateCache). */
  readonly cache: StateCache;

  constructor(readonly deps: RecordsDependencies) {
    this.cache = new StateCache(deps.settings.stateCacheBytes);
  }

  iso(ms = this.deps.now()): string {
    return new Date(ms).toISOString();
  }

  log(fields: Record<string, unknown>): void {
    this.deps.log(JSON.stringify({ event: 'orchestration', ...fields }));
  }

  /**
   * Applies `change` to a document read at `stored.etag`: one write when nobody wrote since,
   * else read, change and write again (a few times). No write when nothing changes.
   */
  async write(stored: StoredState, change: (state: OrchestrationState) => OrchestrationState): Promise<StoredState> {
    let current: StoredState | undefined = stored;
    for (let attempt = 0; attempt < 5 && current; attempt += 1) {
      const next = change(current.state);
      if (next === current.state) return current;
      const written = await this.deps.store.replace(next, current.etag);
      if (written) return this.#kept({ state: next, etag: written.etag }, written.bytes);
      current = await this.deps.store.read(stored.state.id);
    }
    this.cache.drop(stored.state.id);
    if (!current) throw new GatewayError('NotFound', `No orchestration ${stored.state.id}.`);
    throw new GatewayError('Conflict', `Orchestration ${stored.state.id} kept changing; try again.`);
  }

  /** Writes a document with the ETag it was read at (no retry): its new version, or undefined if another writer was first. */
  async replace(stored: StoredState): Promise<StoredState | undefined> {
    const written = await this.deps.store.replace(stored.state, stored.etag);
    if (!written) this.cache.drop(stored.state.id);
    return written && this.#kept({ state: stored.state, etag: written.etag }, written.bytes);
  }

  #kept(stored: StoredState, bytes: number): StoredState {
    this.cache.keep(stored, bytes);
    return stored;
  }

  /**
   * Ends an orchestration (unless it ended already), then updates the index: key, expiry,
   * outbox. `keyEtag`, the request key's version as the caller last saw it, saves reading the key.
   * An ending given as a function is decided on the version written, each try: undefined leaves
   * that version as it is (it changed meanwhile, and no longer ends so).
   */
  async end(stored: StoredState, ending: Ending | ((state: OrchestrationState) => Ending | undefined), keyEtag?: string): Promise<OrchestrationState> {
    const context = { notifyUrl: this.deps.settings.notifyUrl, newId: this.deps.newId };
    const settled = await this.write(stored, (state) => {
      const decided = typeof ending === 'function' ? ending(state) : ending;
      return decided ? ended(state, decided, this.deps.now(), context) : state;
    });
    if (isActive(settled.state)) return settled.state;
    await this.indexEnded(settled.state, keyEtag);
    recordOrchestrationEnd(settled.state);
    this.log({
      id: settled.state.id,
      name: settled.state.name,
      step: 'settled',
      runtimeStatus: settled.state.runtimeStatus,
      failure: settled.state.failure?.code,
    });
    return settled.state;
  }

  /**
   * The index of an orchestration that ended: its request key freed, its purge marked, its
   * outbox marked while deliveries remain. Idempotent: the sweep repeats it for an ended
   * orchestration still holding its key (an instance that died between the two).
   */
  async indexEnded(state: OrchestrationState, keyEtag?: string): Promise<void> {
    const { index, settings } = this.deps;
    const endedAt = Date.parse(state.endedTime ?? state.lastUpdatedTime);
    const dueAt = nextDeliveryAt(state.deliveries);
    await Promise.all([
      index.releaseKey(state.requestKey, state.id, keyEtag),
      index.markExpiry(state.id, endedAt + settings.retentionMs),
      dueAt === undefined ? undefined : index.markOutbox(state.id, dueAt, outboxHint(state.deliveries)),
      // A held start gives back what it held (nothing, if it gave it back when it became due).
      state.heldStart ? this.deps.holds?.release(state) : undefined,
    ]);
  }

  /**
   * Fails a start still Pending past `pendingTimeoutMs` (its instance died before the upstream
   * answered). A held start whose send nobody claimed is not stuck: its rules end it (an expiry,
   * say), or a later step sends it; one whose send was claimed counts from the claim.
   */
  async failStalePending(stored: StoredState, now: number): Promise<boolean> {
    const pendingSince = pendingSinceOf(stored.state);
    if (stored.state.runtimeStatus === 'Pending' && pendingSince === undefined) {
      // Held, its send unclaimed: its own rules end it, also for the janitor, which finds one
      // whose key a stopped instance never wrote (so the poller never lists it).
      const holds = this.deps.holds;
      if (!holds || holds.stepOf(stored.state, now).kind !== 'end') return false;
      await this.end(stored, (state) => {
        const again = holds.stepOf(state, now);
        return again.kind === 'end' ? again.ending : undefined;
      });
      return true;
    }
    if (stored.state.runtimeStatus !== 'Pending' || pendingSince === undefined || now - pendingSince < this.deps.settings.pendingTimeoutMs) return false;
    await this.end(stored, {
      runtimeStatus: 'Failed',
      failure: {
        code: 'StartInterrupted',
        message: 'The instance that started this operation stopped before the upstream answered; whether the upstream received it is unknown.',
      },
    });
    return true;
  }

  /** Removes an ended orchestration's document and everything the index holds of it. */
  async purgeEnded(state: Pick<OrchestrationState, 'id' | 'requestKey' | 'endedTime' | 'lastUpdatedTime'>): Promise<void> {
    const { store, index, settings } = this.deps;
    const endedAt = Date.parse(state.endedTime ?? state.lastUpdatedTime);
    this.cache.drop(state.id);
    await Promise.all([
      store.delete(state.id),
      index.clearOutbox(state.id),
      index.clearExpiry(expiryMarkerName(state.id, endedAt + settings.retentionMs)),
      index.releaseKey(state.requestKey, state.id),
    ]);
  }
}

/**
 * Since when a Pending start may be stuck, for the stale-start rule: one sent at once since it
 * was created; a held one since its send was claimed, and never before (its rules end it).
 */
export function pendingSinceOf(state: OrchestrationState): number | undefined {
  return state.heldStart ? state.heldStart.sendingSince : Date.parse(state.createdTime);
}
