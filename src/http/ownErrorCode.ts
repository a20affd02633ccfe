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
