/**
 * The code of an error answer, as telemetry and the call log record it: the app's own, kept on
 * the answer, and the one an answer's body names.
 */
import type { HttpResponseInit } from '@azure/functions';

/**
 * The code of an error answer the app made itself, kept on the answer (not in its headers or
 * body), so telemetry tells the app's own refusals from the upstream's answers passed back,
 * whose bodies may hold any code. A registered symbol: the app's bundle and the telemetry file
 * each hold a copy of this module, and both must name the same key.
 */
export const ownErrorCode: unique symbol = Symbol.for('management-gateway.ownErrorCode');

export interface WithOwnErrorCode {
  [ownErrorCode]?: string;
}

/** The error code of an answer, for the record: the app's and ARM's under `error`, service health's at the top. */
export function errorCodeOf(response: HttpResponseInit): string | undefined {
  if ((response.status ?? 200) < 400 || typeof response.body !== 'string') return undefined;
  try {
    const body = JSON.parse(response.body) as { error?: { code?: unknown }; code?: unknown };
    const code = body.error?.code ?? body.code;
    return typeof code === 'string' ? code.slice(0, 64) : undefined;
  } catch {
    return undefined;
  }
}
