/**
 * A reply as Teams shows it: an Adaptive Card in a message activity, which both an outgoing
 * webhook's answer and a Workflows webhook take.
 */
import { clip, maxFactChars, maxFacts, replyText, type ChatReply } from '../chatMessages';

/**
 * Teams renders Markdown in a card's texts and facts (`[title](url)` is a link) and has no escape
 * every client honours: text from elsewhere (an upstream's failure message, a usage name) gets a
 * zero-width space inside each `](`, so it cannot become a link that looks like the app's own.
 */
function teamsNeutral(text: string): string {
  return text.replace(/\](?=\()/g, ']\u200b');
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
