/**
 * A store's container(s) created once per process: the first call creates them
 * (`createIfNotExists`, one request each, in one budget) and every call at the same time or after
 * waits on that one creation; a creation that failed is forgotten, so the next call tries again.
 * A store that found its container missing afterwards (a write answered 404: it was deleted)
 * makes it `again`, once for all who find it so at the same time.
 */
import type { ContainerClient } from '@azure/storage-blob';
import type { StorageBudget } from './storageBudget';

/** A container, or how to reach it when it is reached only at its first use (the client is built then). */
export type ContainerSource = ContainerClient | (() => ContainerClient);

export function containerOf(source: ContainerSource): ContainerClient {
  return typeof source === 'function' ? source() : source;
}

/**
 * Makes the containers: once, or `again` after they were found missing. With `abortSignal` (a
 * caller's budget that holds several calls), the creation runs on it; without, within the budget
 * given to containerMadeOnce.
 */
export interface ContainerMaker {
  (abortSignal?: AbortSignal): Promise<void>;
  again(abortSignal?: AbortSignal): Promise<void>;
}

/** The maker of `containers`, which creates them at its first call, within `budget` (`what` names it in its error). */
export function containerMadeOnce(
  containers: ContainerSource | readonly ContainerSource[],
  budget: StorageBudget,
  what = 'create its container',
): ContainerMaker {
  const sources: readonly ContainerSource[] = Array.isArray(containers) ? containers : [containers as ContainerSource];
  const create = async (abortSignal: AbortSignal): Promise<void> => {
    await Promise.all(sources.map((source) => containerOf(source).createIfNotExists({ abortSignal })));
  };
  let making: Promise<void> | undefined;
  let made = false;
  const make = (abortSignal?: AbortSignal): Promise<void> => {
    making ??= (abortSignal ? create(abortSignal) : budget.call(what, create)).then(
      () => {
        made = true;
      },
      (error: unknown) => {
        making = undefined;
        throw error;
      },
    );
    return making;
  };
  const maker = (abortSignal?: AbortSignal) => make(abortSignal);
  maker.again = (abortSignal?: AbortSignal) => {
    // Made before and missing now: made anew. Still being made: the same creation.
    if (made) {
      made = false;
      making = undefined;
    }
    return make(abortSignal);
  };
  return maker;
}
