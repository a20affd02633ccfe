/**
 * A caller's `gateway-wait`, as the routes hold it: within the caller's and the instance's
 * bounds on held waits (see src/access/waitSlots.ts), on the orchestration's shared watch (see
 * orchestrationWaiter.ts), and no longer than the caller is there to hear the answer.
 */
import type { OrchestrationState } from '../orchestration';
import type { StoredStatus } from '../orchestration';
import type { Config } from '../settings';
import type { Services } from '../services';
import type { CallerIdentity } from '../callers';
import { waitReaderOf } from './pollReader';

/** When the Azure front end ends a request, whatever the function is doing (ms from its arrival). */
const frontEndCutMs = 230_000;

/**
 * The longest wait a caller gets: GATEWAY_WAIT_MAX_SECONDS, and short enough that the wait's last
 * look and the read of what it answers with (each up to STORAGE_TIMEOUT_MS) still end before the
 * front end cuts the request.
 */
export function longestWaitSeconds(config: Pick<Config, 'GATEWAY_WAIT_MAX_SECONDS' | 'STORAGE_TIMEOUT_MS'>): number {
  return Math.max(1, Math.min(config.GATEWAY_WAIT_MAX_SECONDS, Math.floor((frontEndCutMs - 2 * config.STORAGE_TIMEOUT_MS) / 1000)));
}

/** Takes one of the held waits the caller and the instance may have, or throws 429 `TooManyWaits`; call the result once done. */
export function takeWaitSlot(services: Services, caller: CallerIdentity, untilMs: number): () => void {
  return services.waits.slots.take(caller.primary, untilMs, services.now());
}

/** The orchestration when it ended, or as it stood when the wait ran out (or the caller left). */
export async function waitForEnd(
  services: Services,
  id: string,
  wait: { untilMs: number; authorization?: string; signal?: AbortSignal; firstLook?: StoredStatus },
): Promise<OrchestrationState | undefined> {
  const reader = await waitReaderOf(services, wait.authorization);
  return services.waits.watches.wait(id, { untilMs: wait.untilMs, reader, signal: wait.signal, firstLook: wait.firstLook });
}
