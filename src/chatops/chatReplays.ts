/**
 * Replay protection across the app's instances. A signed chat request is taken once by the whole
 * app: after its signature and time are checked (and this instance's ReplayCache, which saves the
 * storage call for a replay to the same instance), its signature is recorded in storage with one
 * conditional create (`chat-replay/<signed time>/<platform>/<sha256 of the signature>` in the
 * orchestration container, see storage/onceMarkers.ts). The instance that creates it runs the
 * command; any other, now or until the tolerance has passed, refuses it as a replay. The same
 * signature always carries the same signed time (Slack signs its timestamp, Teams the activity
 * holding its own), so every instance names the same record. The janitor removes expired ones.
 *
 * When storage cannot say in time (down, or slower than the chat waits), the request is refused
 * (fails closed): a signed command may start an operation, and a replay must not.
 */
import { createHash } from 'node:crypto';
import { failureForLog } from '../rules';
import type { Services } from '../services';
import { after } from './chatCall';
import type { ChatReply } from './chatMessages';

export type AppWideUse = 'first' | 'replayed' | 'unchecked';

/** Whether this is the first use of `signature` in the whole app, answered by `answerBy` (else 'unchecked'). */
export async function firstUseAppWide(
  services: Services,
  request: { platform: string; signature: string; signedAtMs: number },
  answerBy: number,
  log: (line: string) => void,
): Promise<AppWideUse> {
  const key = `${request.platform}/${createHash('sha256').update(request.signature).digest('hex')}`;
  const taking = services.chatReplays.take(request.signedAtMs, key).then(
    (first): AppWideUse => (first ? 'first' : 'replayed'),
    (thrown: unknown): AppWideUse => {
      log(`A chat request's replay record could not be written: ${failureForLog(thrown)}`);
      return 'unchecked';
    },
  );
  return Promise.race([taking, after(answerBy - services.now(), 'unchecked' as const)]);
}

export function uncheckedReply(correlationId: string): ChatReply {
  return {
    title: 'The command was not run: the app could not check that this request was not sent before (its storage is slow or down).',
    lines: ['Send it again in a moment.', `Correlation id: ${correlationId}`],
  };
}
