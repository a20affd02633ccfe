/**
 * What the app says in a chat, once, whatever the platform: a title, a few facts and a few
 * lines, short enough to read on a phone. Each platform shows it its own way (slack/slackMessages.ts:
 * Block Kit; teams/teamsMessages.ts: an Adaptive Card), within the bounds here.
 */

export interface ChatReply {
  title: string;
  facts?: [label: string, value: string][];
  lines?: string[];
  /** Links the app builds itself (the console's approval page): a link in Slack, a button in Teams. */
  links?: { label: string; url: string }[];
}

/** What chat shows of an operation, from its state (`status`, `wait`, …) or from its end notice. */
export interface OperationView {
  name: string;
  runtimeStatus: string;
  /** Shown in answers to commands; the end notice leaves it out. */
  createdTime?: string;
  endedTime?: string | null;
  upstreamStatus?: number;
  failure?: { code: string; message: string } | null;
}

/** The facts of an operation, the same in every message that shows one. */
export function operationFacts(view: OperationView): [string, string][] {
  const facts: [string, string][] = [
    ['Operation', view.name],
    ['Status', view.runtimeStatus],
  ];
  if (view.createdTime) facts.push(['Started', view.createdTime]);
  if (view.endedTime) facts.push(['Ended', view.endedTime]);
  if (view.upstreamStatus !== undefined) facts.push(['Upstream answer', `HTTP ${view.upstreamStatus}`]);
  if (view.failure) facts.push(['Failure', `${view.failure.code}: ${view.failure.message}`]);
  return facts;
}

/** What any message shows at most, within Block Kit's limits (10 fields a section, 2000 characters a field, 3000 a text), the strictest. */
export const maxFacts = 10;
export const maxFactChars = 300;
export const maxTextChars = 2900;

export const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/**
 * The plain text of a reply: the notification's fallback and what a screen reader reads. Title
 * and facts may hold text from elsewhere, so they pass through the platform's `escape`; the
 * lines are the app's own.
 */
export function replyText(reply: ChatReply, escape: (text: string) => string = (text) => text): string {
  const facts = (reply.facts ?? []).map(([label, value]) => `${escape(label)}: ${escape(value)}`);
  const links = (reply.links ?? []).map((link) => `${link.label}: ${link.url}`);
  return clip([escape(reply.title), ...facts, ...(reply.lines ?? []), ...links].join('\n'), maxTextChars);
}

/** The usage message: what went wrong, then the grammar. */
export function usageReply(problem: string, usage: readonly string[]): ChatReply {
  return { title: problem, lines: ['Commands:', ...usage] };
}
