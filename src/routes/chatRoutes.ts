/**
 * The chat route approvals add (src/routes/appRoutes.ts spreads it in): Slack's interactivity requests,
 * the clicks on the approval message's buttons. Declared here, with what it answers, so the
 * registration (functions/chatops.ts) and the OpenAPI document read it as they read the others.
 */
import { z } from 'zod';
import { appRoute } from './routeKit';

export const approvalChatRoutes = {
  chatopsSlackInteractive: appRoute(
    {
      name: 'chatops-slack-interactive',
      method: 'POST',
      route: 'chatops/slack/interactive',
      authLevel: 'anonymous',
      access: 'write',
      tag: 'chatops',
      summary:
        "A click on the Slack approval message's Approve or Reject button, verified by its X-Slack-Signature (off until SLACK_SIGNING_SECRET and a rule naming slack: callers are set)",
    },
    () => ({
      body: z
        .looseObject({})
        .describe(
          'application/x-www-form-urlencoded: one field, payload, holding the block_actions JSON Slack sends (user.id, team.id, actions[0].action_id and value, response_url)',
        ),
      responses: {
        200: { description: 'The Block Kit message of the outcome: the approval message again with the decision, or the refusal for the clicker' },
        400: { description: 'The payload is not a click on the approval message (InvalidRequest, InvalidJson)' },
        401: { description: 'Unauthorized: no valid signature, a timestamp too far from now, or a replay' },
        404: { description: 'Chat-ops for Slack is not configured' },
        413: { description: 'Larger than CHATOPS_MAX_BODY_BYTES' },
        415: { description: 'Not application/x-www-form-urlencoded' },
      },
    }),
  ),
};
