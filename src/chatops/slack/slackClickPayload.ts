/**
 * What the app reads of a Slack interactivity request (a click on the approval message's
 * buttons): the form field `payload`, its JSON checked with zod, each refusal saying what is
 * wrong. Slack sends much more (the whole message, the channel), which is left unread.
 */
import { z } from 'zod';
import { GatewayError } from '../../errors';
import { slackId } from './slackCommand';

/** What a button's `action_id` says: set by approvalAnnouncements.ts, read back here. */
export const approvalActions = { approve: 'approve', reject: 'reject' } as const;

const clickPayload = z.object({
  type: z.literal('block_actions', { error: 'This route takes clicks on the approval message\'s buttons (a payload of type "block_actions").' }),
  user: z.object({ id: z.string().regex(slackId, 'must be a Slack user id') }),
  team: z.object({ id: z.string().regex(slackId, 'must be a Slack team id') }, { error: 'The payload names no team (team.id).' }),
  actions: z
    .array(
      z.object({
        action_id: z.enum([approvalActions.approve, approvalActions.reject], {
          error: 'This route takes the Approve and Reject buttons of the approval message only.',
        }),
        value: z.guid({ error: "A button's value is the id of the request it decides on (a GUID)." }),
      }),
    )
    .min(1, 'The payload holds no action.')
    .max(1, 'A click holds one action.'),
  response_url: z.string().max(2048).optional(),
});

export interface SlackClick {
  team: string;
  user: string;
  approved: boolean;
  /** The orchestration id the button carries. */
  id: string;
  responseUrl?: string;
}

/** Reads a click's form; a GatewayError (400, 415) saying what is wrong with one this route cannot take. */
export function readSlackClick(form: URLSearchParams): SlackClick {
  const text = form.get('payload');
  if (text === null) throw new GatewayError('InvalidRequest', 'A Slack click comes as a form with one field, `payload`, holding JSON.');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new GatewayError('InvalidJson', 'The `payload` field of a Slack click holds JSON; this one is not JSON.');
  }
  const parsed = clickPayload.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new GatewayError('InvalidRequest', `The click's payload cannot be taken: ${issue.path.length ? `${issue.path.join('.')}: ` : ''}${issue.message}`);
  }
  const { team, user, actions, response_url: responseUrl } = parsed.data;
  const action = actions[0]!;
  return { team: team.id, user: user.id, approved: action.action_id === approvalActions.approve, id: action.value.toLowerCase(), responseUrl };
}
