/** An upstream answer's JSON, read as one (its depth was bounded as it arrived: upstreamClient.ts). */
import { GatewayError } from '../errors';
import type { UpstreamResponse } from './upstreamClient';

/** The answer's body parsed, or 502 `UpstreamBadResponse` when it is not JSON. */
export function parseUpstreamJson(response: Pick<UpstreamResponse, 'status' | 'bodyText'>): unknown {
  try {
    return JSON.parse(response.bodyText) as unknown;
  } catch {
    throw new GatewayError('UpstreamBadResponse', `The upstream answered ${response.status} with a body that is not JSON.`);
  }
}
