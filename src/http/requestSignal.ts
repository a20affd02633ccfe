import type { HttpRequest } from '@azure/functions';

/**
 * The signal that the caller hung up, where the host gives one: a Fetch request's `signal`.
 * The local host sets it on the requests it invokes with; where the host gives none, a wait
 * runs to its end (its watch costs no more for it) and then frees its slot.
 */
export function callerGoneSignalOf(request: HttpRequest): AbortSignal | undefined {
  const { signal } = request as HttpRequest & { signal?: Partial<AbortSignal> };
  return signal && typeof signal.aborted === 'boolean' && typeof signal.addEventListener === 'function' ? (signal as AbortSignal) : undefined;
}
