/** The chat command grammar as a table: what each text reads as, and what is refused with a usage problem. */
import { commandUsage, maxReasonChars, parseCommand } from '../../../src/chatops/commandGrammar';

const id = '0b5c7e2a-1f3d-4c55-9a6b-2d8e9f001122';
const subscription = '11111111-2222-3333-4444-555555555555';

describe('parseCommand', () => {
  it.each([
    ['', { kind: 'help' }],
    ['help', { kind: 'help' }],
    [`status ${id}`, { kind: 'status', id }],
    [`  WAIT   ${id.toUpperCase()} `, { kind: 'wait', id }],
    [`terminate ${id}`, { kind: 'terminate', id }],
    ['list', { kind: 'list' }],
    ['list running', { kind: 'list', runtimeStatus: 'Running' }],
    ['list failed since 24h', { kind: 'list', runtimeStatus: 'Failed', sinceHours: 24 }],
    ['list since 7d', { kind: 'list', sinceHours: 168 }],
    [
      `migrate ${subscription}/rg-apim/contoso-apim`,
      { kind: 'migrate', subscriptionId: subscription, resourceGroupName: 'rg-apim', serviceName: 'contoso-apim', mode: 'PreserveIp' },
    ],
    [
      `migrate ${subscription}/rg.(x)_1/svc newip`,
      { kind: 'migrate', subscriptionId: subscription, resourceGroupName: 'rg.(x)_1', serviceName: 'svc', mode: 'NewIP' },
    ],
    [`cert 42/${id}`, { kind: 'cert', projectId: '42', environmentId: id }],
    [`usage ${subscription} WestEurope`, { kind: 'usage', subscriptionId: subscription, location: 'westeurope' }],
    [`approve ${id.toUpperCase()}`, { kind: 'approve', id }],
    [`reject ${id}`, { kind: 'reject', id }],
    [`Reject ${id}   not during the   freeze `, { kind: 'reject', id, reason: 'not during the   freeze' }],
    [`reject ${id} <b>no</b>\tthanks`, { kind: 'reject', id, reason: '<b>no</b> thanks' }],
  ])('%j reads as %j', (text, command) => {
    expect(parseCommand(text, 200)).toEqual({ ok: true, command: expect.objectContaining(command) });
  });

  it.each([
    ['deploy everything'],
    ['help me'],
    ['status 42'],
    [`status ${id} ${id}`],
    ['list pending'],
    ['list running since forever'],
    ['list since 0h'],
    ['list since 9999d'],
    ['list running 24h'],
    // A command never takes a URL or a path: only the names the grammar checks.
    ['migrate https://evil.example.com/x/y'],
    [`migrate ${subscription}/rg/../../providers/x`],
    [`migrate ${subscription}/rg/svc%2F..`],
    [`migrate ${subscription}/rg/svc Sideways`],
    [`migrate not-a-guid/rg/svc`],
    [`cert 42/../../secrets`],
    [`cert x/${id}`],
    [`usage ${subscription} west/europe`],
    [`usage ${subscription}`],
    ['approve'],
    ['approve 42'],
    [`approve ${id} because`],
    [`approve ${id}/../x`],
    ['reject'],
    ['reject not-an-id a reason'],
  ])('%j is refused with a usage problem', (text) => {
    const parsed = parseCommand(text, 200);
    expect(parsed.ok).toBe(false);
    expect(parsed.ok ? '' : parsed.problem).toMatch(/\S/);
  });

  it('reads a reason up to its bound, and refuses a longer one', () => {
    const longest = 'x'.repeat(maxReasonChars);
    expect(parseCommand(`reject ${id} ${longest}`, 1000)).toEqual({ ok: true, command: { kind: 'reject', id, reason: longest } });
    expect(parseCommand(`reject ${id} ${longest}x`, 1000)).toEqual({ ok: false, problem: `A reason is at most ${maxReasonChars} characters.` });
  });

  it('lists approve and reject in the help text', () => {
    expect(commandUsage).toEqual(
      expect.arrayContaining(['`approve <id>` — approve a start that waits for your approval', '`reject <id> [reason]` — reject it, saying why']),
    );
  });

  it('refuses a text longer than the bound before reading it', () => {
    expect(parseCommand(`status ${id}`, 16)).toEqual({ ok: false, problem: 'A command is at most 16 characters.' });
  });
});
