/**
 * `x-gateway-notify: <url>` on a long-running start: where to tell of its end. The URL's origin
 * must be one the deployment allows (`NOTIFY_ALLOWED_ORIGINS`), or the app could be made to
 * post to any host a caller names (its own network included); checked before anything is sent
 * upstream. The header is the app's own and never forwarded.
 *
 * A fragment is refused: it is never sent, and the app's own targets use it to mark the end of
 * a chat command (`#chatops=slack`, see src/chatops/chatNotifier.ts), which would otherwise let
 * a caller turn its signed CloudEvent into an unsigned chat post, or into a post to the
 * operators' SLACK_WEBHOOK_URL.
 */
import { GatewayError } from '../errors';

export const notifyHeader = 'x-gateway-notify';

export function notifyTargetsOf(value: string | null, allowedOrigins: readonly string[], longRunning: boolean): string[] | undefined {
  if (value === null) return undefined;
  if (!longRunning) throw new GatewayError('InvalidRequest', `${notifyHeader} applies to long-running operations only.`, { target: notifyHeader });
  let url: URL | undefined;
  try {
    url = value.length <= 2048 ? new URL(value.trim()) : undefined;
  } catch {
    url = undefined;
  }
  if (!url || !/^https?:$/.test(url.protocol) || url.username || url.password) {
    throw new GatewayError('InvalidRequest', `${notifyHeader} must be one absolute http or https URL (at most 2048 characters, no user info).`, {
      target: notifyHeader,
    });
  }
  if (url.href.includes('#')) {
    throw new GatewayError('InvalidRequest', `${notifyHeader} must not carry a fragment (#…): give the URL without it.`, { target: notifyHeader });
  }
  if (!allowedOrigins.includes(url.origin)) {
    throw new GatewayError('NotifyTargetNotAllowed', `The origin ${url.origin} is not one NOTIFY_ALLOWED_ORIGINS allows.`, { target: notifyHeader });
  }
  return [url.toString()];
}
