/**
 * What a chat platform is to the app: how its signed requests prove themselves and are read
 * (chatEndpoint.ts runs the checks every platform shares), how a reply is shown, where the end
 * of a command started from it is posted, and what it adds to the start-up summary. A platform
 * is a folder (slack/, teams/) exporting one ChatPlatform, listed in platforms.ts; nothing else
 * names a platform.
 */
import type { HttpHandler } from '@azure/functions';
import type { ServicesSource } from '../http';
import type { AppRoute } from '../routes';
import type { Config } from '../settings';
import type { DeliveryOutcome } from '../orchestration';
import type { OrchestrationState } from '../orchestration';
import type { Services } from '../services';
import type { UseCounters } from '../storage';
import type { ChatReply } from './chatMessages';
import type { HttpRequest } from '@azure/functions';
import type { CallerIdentity } from '../callers';
import type { SignatureVerdict } from './requestSignatures';

/** The settings that hold a platform's secret: its route is off until one is set. */
export type ChatSecretSetting = { [Name in keyof Config]-?: Config[Name] extends string | undefined ? Name : never }[keyof Config];

/** What names a platform everywhere: routes (`chatops/<name>`), callers (`<name>:…`), end targets (`#chatops=<name>`). */
export interface ChatPlatformKey {
  name: string;
  /** Its secret's setting, named in the summary when it is missing. */
  secretSetting: ChatSecretSetting;
}

/** Where the end of a command goes: a URL to post to, and for a Slack response_url when it expires. */
export interface ChatTarget {
  platform: string;
  url: string;
  /** A target's expiry (ms since the epoch): Slack keeps a response_url 30 minutes. */
  untilMs?: number;
}

/** One post of a message (JSON) to a URL, traced as a delivery: never throws, says how it went. */
export type PostMessage = (url: string, message: unknown) => Promise<DeliveryOutcome>;

/** What a platform's end sender is built with, once per app. */
export interface EndSenderContext {
  config: Config;
  /** The posts per target counted app-wide (Slack's response_urls: src/storage/useCounters.ts); absent, per instance. */
  postCounts?: Pick<UseCounters, 'take'>;
  now: () => number;
  log: (line: string) => void;
}

/** Posts the end of a command to one of the platform's targets. */
export interface EndSender {
  send(target: ChatTarget, reply: ChatReply, post: PostMessage): Promise<DeliveryOutcome>;
}

/** How a platform's commands come in, and how its replies are shown. */
/** What a platform's route does with a verified request: who sent which text, and where its end goes. */
export interface ChatRequest {
  caller: CallerIdentity;
  text: string;
  endTarget?: string;
  endNote: string;
  /** The time the request was signed at (ms since the epoch): the same for every copy of one signature. */
  signedAtMs: number;
}

/** How a platform's signed request proves itself and is read: what every chat route checks the same way. */
export interface SignedChatRequests<Read extends { signedAtMs: number }> {
  platform: ChatPlatformKey;
  /** The signature check, on the raw body. */
  verify(services: Services, request: HttpRequest, body: Buffer): SignatureVerdict;
  /** A signed request the platform sends only to check the route (Slack's `ssl_check=1`): answered 200, nothing read or run. */
  isCheck?(body: Buffer): boolean;
  /** The verified request read; a GatewayError for one that is signed but unreadable. */
  read(services: Services, request: HttpRequest, body: Buffer): Read;
  answerBudgetMs(services: Services): number;
}

export interface ChatPlatformHandler extends SignedChatRequests<ChatRequest> {
  render(reply: ChatReply): unknown;
}

export interface ChatPlatform extends ChatPlatformKey {
  /** Its name as people write it (the start-up summary's label). */
  title: string;
  /** Its routes (declared in src/routes) and their handlers: registered always, answering 404 until the platform is on. */
  routes: { route: AppRoute; handler: (getServices: ServicesSource) => HttpHandler }[];
  /** Its slash commands or mentions: checked, read and answered within its ack budget. */
  commands: ChatPlatformHandler;
  /** Builds what posts the ends of its commands. */
  endSender(context: EndSenderContext): EndSender;
  /** The origins its ends go to (allowed as end targets beside NOTIFY_ALLOWED_ORIGINS). */
  endOrigins(config: Config): string[];
  /** What the start-up summary says of where its ends go (never a URL's path or query: a webhook holds its token). */
  endsSummary(config: Config): string;
  /** Told of a start stored to wait for approval (Slack posts its approval message); best effort, never throws. */
  onHeldStart?(services: Services, state: OrchestrationState): Promise<void>;
}

/** A target as the outbox stores it: the URL with a fragment saying which platform posts to it (a fragment is never sent). */
export function chatTargetUrl(target: ChatTarget): string {
  const url = new URL(target.url);
  url.hash = new URLSearchParams({ chatops: target.platform, ...(target.untilMs === undefined ? {} : { until: String(target.untilMs) }) }).toString();
  return url.toString();
}

/** The chat target a stored target names, if it names one of `platforms`. */
export function chatTargetOf(target: string, platforms: readonly string[]): ChatTarget | undefined {
  const url = new URL(target);
  const fragment = new URLSearchParams(url.hash.slice(1));
  const platform = fragment.get('chatops');
  if (platform === null || !platforms.includes(platform)) return undefined;
  const until = Number(fragment.get('until'));
  url.hash = '';
  return { platform, url: url.toString(), ...(Number.isFinite(until) && until > 0 ? { untilMs: until } : {}) };
}
