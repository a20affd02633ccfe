/**
 * A reply as Slack shows it: Block Kit, an ephemeral answer (seen by the user who typed the
 * command) unless posted to a channel.
 */
import { clip, maxFactChars, maxFacts, maxTextChars, replyText, type ChatReply } from '../chatMessages';

/** Slack's mrkdwn gives `&`, `<` and `>` meaning: text from elsewhere is escaped. */
function slackEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
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
