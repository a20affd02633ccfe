/**
 * `npm run chat -- [options] slack|teams "<command>"`: sends a chat command to the app as Slack or
 * Teams would (signed with the platform's signature, from a user the local chat start's
 * ACCESS_POLICY names), prints the answer, and for a `migrate` waits for the end the app posts to
 * the command's response_url (Slack) or the Workflows webhook (Teams): a stand-in for both, which
 * this command serves itself while it waits (tools/chatStandIn.ts). See docs/chatops.md, "Try it
 * locally".
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { localChat, slackCommandRequest, teamsCommandRequest, type SignedChatRequest } from './chatRequests';
import { StandInRefused, startChatStandIn, type ChatStandIn } from './chatStandIn';

const usage = `Usage: npm run chat -- [--app <url>] [--stand-in <url>] [--wait <seconds>] [--user <id>] slack|teams "<command>"
  --app       the app's base URL (default http://127.0.0.1:7071/api)
  --stand-in  where the app posts the ends of operations: the origin of SLACK_RESPONSE_URL_ORIGINS and
              TEAMS_WORKFLOW_URL (default ${localChat.standIn})
  --wait      how long a migrate waits for its end, in seconds (default 60; 0: not at all)
  --user      the user: <team id>/<user id> for Slack (default ${localChat.slackUser}),
              <tenant id>/<AAD object id> for Teams (default ${localChat.teamsUser})
  The secrets are SLACK_SIGNING_SECRET and TEAMS_WEBHOOK_SECRET if set, else the local chat start's.`;

class ChatToolError extends Error {}

interface ChatOptions {
  platform: 'slack' | 'teams';
  text: string;
  app: string;
  standIn: URL;
  waitSeconds: number;
  user: string;
}

const chatOptions = {
  app: { type: 'string' },
  'stand-in': { type: 'string' },
  wait: { type: 'string' },
  user: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

function parsed(args: string[]) {
  try {
    return parseArgs({ args, allowPositionals: true, options: chatOptions });
  } catch (error) {
    throw new ChatToolError(`${(error as Error).message}\n${usage}`);
  }
}

function urlOption(name: string, value: string): URL {
  try {
    return new URL(value);
  } catch {
    throw new ChatToolError(`--${name} takes a URL, such as http://127.0.0.1:7071/api.\n${usage}`);
  }
}

function optionsOf(args: string[]): ChatOptions {
  const { values, positionals } = parsed(args);
  const [platform, ...words] = positionals;
  if (values.help || (platform !== 'slack' && platform !== 'teams') || words.length === 0) throw new ChatToolError(usage);
  const waitSeconds = Number(values.wait ?? '60');
  if (!/^\d{1,4}$/.test(values.wait ?? '60')) throw new ChatToolError(`--wait takes whole seconds, 0 to 9999.\n${usage}`);
  const app = (values.app ?? 'http://127.0.0.1:7071/api').replace(/\/+$/, '');
  return {
    platform,
    text: words.join(' '),
    // As the docs' other commands write it, with its /api; a bare origin gets the default prefix.
    app: urlOption('app', app).pathname === '/' ? `${app}/api` : app,
    standIn: urlOption('stand-in', values['stand-in'] ?? localChat.standIn),
    waitSeconds,
    user: values.user ?? (platform === 'slack' ? localChat.slackUser : localChat.teamsUser),
  };
}

function requestOf(options: ChatOptions, responseUrl: string): SignedChatRequest {
  const [first = '', second = ''] = options.user.split('/');
  if (options.platform === 'slack') {
    return slackCommandRequest(process.env.SLACK_SIGNING_SECRET || localChat.slackSigningSecret, {
      team: first,
      user: second,
      text: options.text,
      responseUrl,
    });
  }
  return teamsCommandRequest(process.env.TEAMS_WEBHOOK_SECRET || localChat.teamsWebhookSecret, { tenant: first, user: second, text: options.text });
}

/** The message's text as a person reads it: Slack's escapes undone, indented under its heading. */
function shown(text: string): string {
  return text
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n');
}

/** What a refusal means here, beyond the app's own words. */
const refusalHints: Record<number, string> = {
  401: 'The app refused the signature: start it with the secrets this command signs with (the local chat start of docs/chatops.md, or SLACK_SIGNING_SECRET / TEAMS_WEBHOOK_SECRET set for both).',
  404: "The app's chat route is off: its platform's secret and an ACCESS_POLICY rule naming the user are both needed (the local chat start of docs/chatops.md sets them).",
};

async function send(options: ChatOptions, request: SignedChatRequest): Promise<string> {
  const url = `${options.app}/${request.route}`;
  let response: Response;
  try {
    response = await fetch(url, { method: 'POST', headers: request.headers, body: request.body });
  } catch (error) {
    throw new ChatToolError(
      `Nothing answered at ${url} (${(error as Error & { cause?: Error }).cause?.message ?? (error as Error).message}): start the app first (npm start), or give --app its address.`,
    );
  }
  const answer = (await response.json().catch(() => ({}))) as { text?: string; error?: { code?: string; message?: string } };
  const correlationId = response.headers.get('x-correlation-id');
  if (response.status !== 200) {
    const said = answer.error ? `${answer.error.code}: ${answer.error.message}` : 'no message';
    throw new ChatToolError(`The app answered HTTP ${response.status} (${said}).${refusalHints[response.status] ? `\n${refusalHints[response.status]}` : ''}`);
  }
  console.log(`${options.platform === 'slack' ? 'Slack' : 'Teams'} shows (HTTP 200, correlation id ${correlationId}):\n${shown(answer.text ?? '')}`);
  return answer.text ?? '';
}

async function waitForEnd(options: ChatOptions, standIn: ChatStandIn, reply: string, responsePath: string): Promise<void> {
  const id = /^Started operation ([0-9a-f-]{36})/m.exec(reply)?.[1];
  if (!id || options.waitSeconds === 0) return;
  const where =
    options.platform === 'slack' ? `the response_url (${options.standIn.origin}${responsePath})` : `the Workflows webhook (${options.standIn.origin})`;
  console.log(`Waiting up to ${options.waitSeconds} s for its end, posted to ${where}…`);
  const startedMs = Date.now();
  const end = await standIn.nextPost(
    (post) => (options.platform === 'slack' ? post.path === responsePath : post.text.includes(id)),
    options.waitSeconds * 1000,
  );
  if (!end)
    throw new ChatToolError(
      `No end was posted within ${options.waitSeconds} s: the operation may still be running (\`status ${id}\` says), or the app's SLACK_RESPONSE_URL_ORIGINS / TEAMS_WORKFLOW_URL do not name ${options.standIn.origin}.`,
    );
  console.log(`Posted after ${((Date.now() - startedMs) / 1000).toFixed(1)} s:\n${shown(end.text)}`);
}

async function main(): Promise<void> {
  const options = optionsOf(process.argv.slice(2));
  const [team = ''] = options.user.split('/');
  const responsePath = `/commands/${team}/${randomUUID()}`;
  // Only a command that may start an operation waits for an end: the stand-in serves only then.
  const standIn = /^\s*migrate\b/i.test(options.text) && options.waitSeconds > 0 ? await startChatStandIn(options.standIn) : undefined;
  try {
    const reply = await send(options, requestOf(options, `${options.standIn.origin}${responsePath}`));
    if (standIn) await waitForEnd(options, standIn, reply, responsePath);
  } finally {
    await standIn?.close();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof ChatToolError || error instanceof StandInRefused ? error.message : String(error));
  process.exit(1);
});
