/** The chat platforms the app takes commands from: a third is a folder beside slack/ and teams/, and one entry here. */
import type { Dispatcher } from 'undici';
import type { NotificationSender } from '../notifications';
import type { OrchestrationState } from '../orchestration';
import type { Services } from '../services';
import type { Config } from '../settings';
import { ChatNotifier } from './chatNotifier';
import type { ChatPlatform, EndSenderContext } from './chatPlatform';
import { chatEnabled, chatMissing } from './chatSettings';
import { slack } from './slack/slackPlatform';
import { teams } from './teams/teamsPlatform';

export const chatPlatforms: readonly ChatPlatform[] = [slack, teams];

/** The start's line for each platform: on, and where ends go; or off, and what is missing. */
export function chatSummaries(config: Config): [title: string, summary: string][] {
  return chatPlatforms.map((platform) => [
    platform.title,
    chatEnabled(config, platform)
      ? `on: POST chatops/${platform.name}; ${platform.endsSummary(config)}`
      : `off (POST chatops/${platform.name} answers 404): ${chatMissing(config, platform).join(', ')}`,
  ]);
}

/** The origins the ends of chat commands go to, of the platforms that are on. */
export function chatEndOrigins(config: Config): string[] {
  return chatPlatforms.filter((platform) => chatEnabled(config, platform)).flatMap((platform) => platform.endOrigins(config));
}

/** The engine's notifier: chat ends as the platforms' messages on the CloudEvents' pool, every other target as before. */
export function chatNotifierOf(
  config: Config,
  events: NotificationSender | undefined,
  deliveries: Dispatcher,
  postCounts?: EndSenderContext['postCounts'],
): Pick<NotificationSender, 'send'> | undefined {
  const enabled = chatPlatforms.filter((platform) => chatEnabled(config, platform));
  if (enabled.length === 0) return events;
  // eslint-disable-next-line no-console
  const context: EndSenderContext = { config, postCounts, now: Date.now, log: (line) => console.log(line) };
  return new ChatNotifier({
    events,
    senders: new Map(enabled.map((platform) => [platform.name, platform.endSender(context)])),
    timeoutMs: config.NOTIFY_TIMEOUT_MS,
    dispatcher: deliveries,
  });
}

/** Every platform's word on a start just stored to wait for approval (Slack posts its approval message), when the platform is on. */
export async function announceHeldStart(services: Services, state: OrchestrationState): Promise<void> {
  await Promise.all(
    chatPlatforms
      .filter((platform) => platform.onHeldStart && chatEnabled(services.config, platform))
      .map((platform) => platform.onHeldStart!(services, state)),
  );
}
