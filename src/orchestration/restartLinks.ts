/**
 * The links between an ended orchestration and its restart. The original names the new one
 * (`restartedAs`) before the new one is started, by a write conditioned on the version read
 * without a link: of two restarts racing, one writes first and the other finds the link and is
 * refused, so an original is restarted once. A restart refused after the link (by the access
 * policy, validation, a duplicate) takes its link back.
 */
import { GatewayError } from '../errors';
import { updateConditionally } from '../storage';
import type { OrchestrationState } from './orchestrationState';
import type { OrchestrationStore } from './orchestrationStore';

/** Tries of a conditional write that another writer (a notification's delivery) got in before. */
const writeAttempts = 5;

/**
 * How long a link to an orchestration that does not exist is taken for a restart still starting
 * it; after that it is stale (that restart died first, or the new one was purged) and the
 * original may be restarted again.
 */
export const restartStartingMs = 2 * 60_000;

async function changeOriginal(
  store: OrchestrationStore,
  id: string,
  change: (state: OrchestrationState) => Promise<OrchestrationState | undefined>,
): Promise<void> {
  const document = {
    read: async () => {
      const stored = await store.read(id);
      return stored && { value: stored.state, etag: stored.etag };
    },
    // Only a stored document is changed (none: refused below), so there is always an ETag.
    write: async (state: OrchestrationState, etag: string | undefined) => (etag === undefined ? undefined : (await store.replace(state, etag))?.etag),
  };
  const changed = await updateConditionally(
    document,
    (stored) => {
      if (!stored) throw new GatewayError('NotFound', `No orchestration ${id}.`, { target: 'id' });
      return change(stored.value);
    },
    writeAttempts,
  );
  if (changed.kind === 'conflict') {
    throw new GatewayError('Conflict', `Orchestration ${id} kept changing while it was being restarted; try again.`, { target: 'id' });
  }
}

/** Links `originalId` to `newId` (not started yet), or throws 409 `Conflict` when it was restarted already. */
export function linkRestart(store: OrchestrationStore, originalId: string, newId: string, now: number): Promise<void> {
  return changeOriginal(store, originalId, async (state) => {
    if (state.restartedAs && ((await store.readStatus(state.restartedAs)) || now - Date.parse(state.lastUpdatedTime) < restartStartingMs)) {
      throw new GatewayError(
        'Conflict',
        `Orchestration ${originalId} was restarted already, as ${state.restartedAs}: restart that one instead (GET orchestrations/${state.restartedAs}).`,
        { target: 'id' },
      );
    }
    return { ...state, restartedAs: newId, lastUpdatedTime: new Date(now).toISOString() };
  });
}

/** Takes back the link to `newId` when the restart started nothing; another restart's link is left. */
export function unlinkRestart(store: OrchestrationStore, originalId: string, newId: string): Promise<void> {
  return changeOriginal(store, originalId, async (state) => {
    if (state.restartedAs !== newId) return undefined;
    const { restartedAs: _dropped, ...unlinked } = state;
    return unlinked;
  });
}
