/**
 * `npm run chat` (tools/chat.ts, as built to dist/tools/chat.js) against the built app started as
 * the local chat start of docs/chatops.md starts it: each platform's `help`, a migration
 * acknowledged and its end printed from the stand-in the command serves itself, and what goes
 * wrong said in words with a non-zero exit.
 */
import { execFile } from 'node:child_process';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { startApp, type AppProcess } from '../../tools/harness/appProcess';
import { localChat } from '../../tools/chatRequests';

const chatTool = resolve(__dirname, '..', '..', 'dist', 'tools', 'chat.js');
const subscription = '00000000-0000-0000-0000-000000000000';
let app: AppProcess;
let standIn: string;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  const { port } = server.address() as { port: number };
  await new Promise((closed) => server.close(closed));
  return port;
}

function chat(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) =>
    execFile(
      process.execPath,
      [chatTool, '--app', `${app.url}/api`, ...args],
      { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 90_000 },
      (error, stdout, stderr) => done({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    ),
  );
}

beforeAll(async () => {
  standIn = `http://127.0.0.1:${await freePort()}`;
  app = await startApp({
    SLACK_SIGNING_SECRET: localChat.slackSigningSecret,
    TEAMS_WEBHOOK_SECRET: localChat.teamsWebhookSecret,
    SLACK_RESPONSE_URL_ORIGINS: JSON.stringify([standIn]),
    TEAMS_WORKFLOW_URL: `${standIn}/workflows/local`,
    ACCESS_POLICY: JSON.stringify([{ callers: [`slack:${localChat.slackUser}`, `teams:${localChat.teamsUser}`], allow: ['read', 'write'] }]),
    ORCHESTRATION_POLL_SCHEDULE: '*/1 * * * * *',
  });
});
afterAll(() => app.stop());

it.each(['slack', 'teams'])('%s help: the list of commands under one heading, as the platform shows it', async (platform) => {
  const { code, stdout } = await chat([platform, 'help']);
  expect(code).toBe(0);
  expect(stdout).toMatch(
    new RegExp(
      `^${platform === 'slack' ? 'Slack' : 'Teams'} shows \\(HTTP 200, correlation id [0-9a-f-]{36}\\):\\n  Commands this app takes:\\n  \`status <id>\``,
    ),
  );
  expect(stdout).not.toContain('Commands:');
});

it.each([
  ['slack', 'apim-chat-tool', /posted to the response_url \(http:\/\/127\.0\.0\.1:\d+\/commands\/T0LOCAL\/[0-9a-f-]{36}\)/],
  ['teams', 'apim-chat-tool-teams NewIP', /posted to the Workflows webhook \(http:\/\/127\.0\.0\.1:\d+\)/],
])('%s migrate: the acknowledgement, then the end the app posts to the stand-in', async (platform, service, where) => {
  const { code, stdout, stderr } = await chat(['--stand-in', standIn, platform, `migrate ${subscription}/rg-demo/${service}`]);
  expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  const id = /Started operation ([0-9a-f-]{36})/.exec(stdout)?.[1];
  expect(id).toBeDefined();
  expect(stdout).toMatch(where);
  expect(stdout).toMatch(new RegExp(`Posted after \\d+\\.\\d s:\\n  Operation ${id} completed\\n`));
  const status = await chat([platform, `status ${id}`]);
  expect(status.stdout).toContain(`Status: Completed`);
});

it('waits no longer than --wait for an end the app does not post there, and says why', async () => {
  // A stand-in the app's SLACK_RESPONSE_URL_ORIGINS does not name: the end has nowhere to go.
  const elsewhere = `http://127.0.0.1:${await freePort()}`;
  const { code, stdout, stderr } = await chat(['--stand-in', elsewhere, '--wait', '3', 'slack', `migrate ${subscription}/rg-demo/apim-chat-tool-nowhere`]);
  expect(code).toBe(1);
  expect(stdout).toContain('No reply link came with the command');
  expect(stderr).toMatch(/^No end was posted within 3 s: .*SLACK_RESPONSE_URL_ORIGINS \/ TEAMS_WORKFLOW_URL do not name http:\/\/127\.0\.0\.1:\d+\.\n$/);
});

it('a secret the app does not hold: the 401 and what to do, exit 1', async () => {
  const { code, stdout, stderr } = await chat(['slack', 'help'], { SLACK_SIGNING_SECRET: 'another-signing-secret-0001' });
  expect({ code, stdout }).toEqual({ code: 1, stdout: '' });
  expect(stderr).toMatch(
    /^The app answered HTTP 401 \(Unauthorized: The request signature does not match\.\)\.\nThe app refused the signature: start it with the secrets this command signs with/,
  );
});

it('no app at the address: says so, exit 1', async () => {
  const { code, stderr } = await chat(['--app', `http://127.0.0.1:${await freePort()}/api`, 'teams', 'help']);
  expect(code).toBe(1);
  expect(stderr).toMatch(/^Nothing answered at http:\/\/127\.0\.0\.1:\d+\/api\/chatops\/teams \(.*ECONNREFUSED.*\): start the app first/);
});
