/**
 * What a restart tells the operation handler it replays a request through: the id chosen for
 * the new orchestration and the original's. Held in process, keyed by the request object the
 * restart built, so no outside caller can claim to be a restart (no header carries it).
 */
import type { HttpRequest } from '@azure/functions';

export interface RestartLink {
  /** The new orchestration's id, which the original already names as `restartedAs`. */
  id: string;
  restartedFrom: string;
}

const replays = new WeakMap<HttpRequest, RestartLink>();

/** Marks `request` as the replay of a restart. */
export function markReplay(request: HttpRequest, link: RestartLink): HttpRequest {
  replays.set(request, link);
  return request;
}

/** The restart `request` replays, if it is one: the fields the start takes of it. */
export function replayOf(request: HttpRequest): Partial<RestartLink> {
  const link = replays.get(request);
  return link ? { id: link.id, restartedFrom: link.restartedFrom } : {};
}
