/**
 * Whose token reads the upstream when a caller's request drives an orchestration: in
 * passthrough mode the caller's own (and only for its own orchestrations, see `actorOf`), in
 * the other modes the app's.
 */
import type { PollReader } from '../orchestration';
import type { Services } from '../services';
import { actorOf, bearerTokenOf } from '../upstream';

/** The caller as a reader in passthrough mode; undefined in the other modes or without a token. */
export function callerReaderOf(services: Services, authorization: string | undefined): PollReader | undefined {
  const token = bearerTokenOf(authorization);
  return services.tokens.mode === 'passthrough' && token ? { token, actor: actorOf(token) } : undefined;
}

/** The reader of a wait: the caller's in passthrough mode, else the app's own token. */
export async function waitReaderOf(services: Services, authorization: string | undefined): Promise<PollReader | undefined> {
  if (services.tokens.mode === 'passthrough') return callerReaderOf(services, authorization);
  return { token: await services.tokens.getToken({ upstream: 'management' }) };
}
