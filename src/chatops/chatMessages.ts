/**
 * What the app says in a chat, once, and how each platform shows it: a title, a few facts and
 * a few lines, short enough to read on a phone. Slack gets Block Kit (an ephemeral answer, seen
 * by the user who typed the command), Teams an Adaptive Card in a message activity, which both
 * an outgoing webhook's answer and a Workflows webhook take.
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

/** Block Kit's limits: 10 fields a section, 2000 characters a field, 3000 a text. */
const maxFacts = 10;
const maxFactChars = 300;
const maxTextChars = 2900;

const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** Slack's mrkdwn gives `&`, `<` and `>` meaning: text from elsewhere is escaped. */
function slackEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * Teams renders Markdown in a card's texts and facts (`[title](url)` is a link) and has no escape
 * every client honours: text from elsewhere (an upstream's failure message, a usage name) gets a
 * zero-width space inside each `](`, so it cannot become a link that looks like the app's own.
 */
function teamsNeutral(text: string): string {
  return text.replace(/\](?=\()/g, ']\u200b');
}

/**
 * The plain text of a reply: the notification's fallback and what a screen reader reads. Title
 * and facts may hold text from elsewhere, so they pass through the platform's `escape`; the
 * lines are the app's own.
 */
function replyText(reply: ChatReply, escape: (text: string) => string = (text) => text): string {
  const facts = (reply.facts ?? []).map(([label, value]) => `${escape(label)}: ${escape(value)}`);
  const links = (reply.links ?? []).map((link) => `${link.label}: ${link.url}`);
  return clip([escape(reply.title), ...facts, ...(reply.lines ?? []), ...links].join('\n'), maxTextChars);
}

export function slackMessage(reply: ChatReply, options: { replaceOriginal?: boolean } = {}) {
  const facts = (reply.facts ?? []).slice(0, maxFacts);
  const blocks: unknown[] = [{ type: 'section', text: { type: 'mrkdwn', text: clip(`*${slackEscape(reply.title)}*`, maxTextChars) } }];
  if (facts.length > 0) {
    blocks.push({
      type: 'section',
      fields: facts.map(([label, value]) => ({ type: 'mrkdwn', text: clip(`*${slackEscape(label)}*\n${slackEscape(value)}`, maxFactChars) })),
    });
  }
  // Lines are the app's own text (commands in backticks are meant as code).
  if (reply.lines?.length) blocks.push({ type: 'section', text: { type: 'mrkdwn', text: clip(reply.lines.join('\n'), maxTextChars) } });
  // The app's own URLs (its base and an id); `<url|label>` is Slack's link.
  if (reply.links?.length)
    blocks.push({ type: 'section', text: { type: 'mrkdwn', text: reply.links.map((link) => `<${link.url}|${slackEscape(link.label)}>`).join('\n') } });
  return {
    response_type: 'ephemeral',
    ...(options.replaceOriginal === undefined ? {} : { replace_original: options.replaceOriginal }),
    text: replyText(reply, slackEscape),
    blocks,
  };
}

export function teamsMessage(reply: ChatReply) {
  const facts = (reply.facts ?? [])
    .slice(0, maxFacts)
    .map(([title, value]) => ({ title: teamsNeutral(title), value: clip(teamsNeutral(value), maxFactChars) }));
  const body: unknown[] = [{ type: 'TextBlock', text: clip(teamsNeutral(reply.title), maxFactChars), weight: 'Bolder', size: 'Medium', wrap: true }];
  if (facts.length > 0) body.push({ type: 'FactSet', facts });
  for (const line of reply.lines ?? []) body.push({ type: 'TextBlock', text: clip(line, maxFactChars), wrap: true });
  return {
    type: 'message',
    text: teamsNeutral(replyText(reply)),
    attachments: [
      {
        contentType: 'application/vnd.microsoft.card.adaptive',
        contentUrl: null,
        content: {
          $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
          type: 'AdaptiveCard',
          version: '1.4',
          body,
          ...(reply.links?.length ? { actions: reply.links.map((link) => ({ type: 'Action.OpenUrl', title: link.label, url: link.url })) } : {}),
        },
      },
    ],
  };
}

/** The usage message: what went wrong, then the grammar. */
export function usageReply(problem: string, usage: readonly string[]): ChatReply {
  return { title: problem, lines: ['Commands:', ...usage] };
}
