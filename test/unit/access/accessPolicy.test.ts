/** ACCESS_POLICY as tables: callers × operations × scopes, the union of rules, admin, and parsing. */
import { AccessPolicy, accessPolicyOf, type AccessRule, type Action, type Caller } from '../../../src/access/accessPolicy';
import { ConfigError, parseConfig } from '../../../src/settings/config';

const bot: Caller = { primary: 'key:0123456789ab', selectors: ['key:0123456789ab'] };
const automation: Caller = { primary: 'principal:aaaa-1111', selectors: ['principal:aaaa-1111', 'key:feedfacecafe'] };
const operator: Caller = { primary: 'principal:bbbb-2222', selectors: ['principal:bbbb-2222', 'role:Gateway.Operator'] };
const stranger: Caller = { primary: 'key:999999999999', selectors: ['key:999999999999'] };

const rules: AccessRule[] = [
  // A chat-ops bot: reads anywhere, starts container groups in one resource group, at a modest rate.
  { callers: ['key:0123456789AB'], allow: ['read'], rate: { readsPerMinute: 60 } },
  {
    callers: ['key:0123456789ab'],
    allow: ['ContainerGroups_CreateOrUpdate'],
    scopes: ['/subscriptions/s1/resourceGroups/rg-bot'],
    rate: { readsPerMinute: 120, writesPerMinute: 10 },
  },
  // An automation principal: writes in two subscriptions.
  { callers: ['principal:aaaa-1111'], allow: ['write', 'read'], scopes: ['/subscriptions/s1', '/subscriptions/s2'] },
  // Operators, by app role: everything, every orchestration.
  { callers: ['role:Gateway.Operator'], allow: ['read', 'write', 'secrets', 'admin'] },
  // Everyone: the app's own read-only routes.
  { callers: ['*'], allow: ['openapi', 'templates-apis-validate'] },
];
const policy = new AccessPolicy(rules);

const op = (names: string[], access: Action['access']): Action => ({ names, access });
const listUsage = op(['Location_ListUsage', 'location-listUsage'], 'read');
const createGroup = op(['ContainerGroups_CreateOrUpdate', 'containerGroups-createOrUpdate'], 'write');
const migrate = op(['ApiManagementService_MigrateToStv2', 'apiManagementService-migrateToStv2'], 'write');
const download = op(['EnvironmentCertificate_Download', 'certificates-download'], 'secrets');
const terminate = op(['orchestrations-terminate'], 'write');
const openApi = op(['openapi'], 'read');

describe('AccessPolicy.grant', () => {
  it.each<[string, Caller, Action, ReturnType<AccessPolicy['grant']>]>([
    [
      'the bot reads anywhere, at its read rate',
      bot,
      listUsage,
      { scopes: undefined, rate: { readsPerMinute: 60, writesPerMinute: undefined }, rateSubject: 'key:0123456789ab' },
    ],
    [
      'the bot starts container groups in its resource group only',
      bot,
      createGroup,
      { scopes: ['/subscriptions/s1/resourceGroups/rg-bot'], rate: { readsPerMinute: 120, writesPerMinute: 10 }, rateSubject: 'key:0123456789ab' },
    ],
    ['the bot may not migrate', bot, migrate, undefined],
    ['the bot may not terminate', bot, terminate, undefined],
    ['the bot may not download secrets', bot, download, undefined],
    ['the automation writes in its two subscriptions', automation, migrate, { scopes: ['/subscriptions/s1', '/subscriptions/s2'], rate: undefined }],
    ['the automation may not download secrets', automation, download, undefined],
    ['an operator, by role, may download', operator, download, { scopes: undefined, rate: undefined }],
    ['a stranger may read the OpenAPI document (*)', stranger, openApi, { scopes: undefined, rate: undefined }],
    ['a stranger may do nothing else', stranger, listUsage, undefined],
  ])('%s', (_title, caller, action, expected) => {
    expect(policy.grant(caller, action)).toEqual(expected);
  });

  it('allows exactly what it grants', () => {
    for (const [caller, action] of [
      [bot, listUsage],
      [bot, migrate],
      [operator, download],
      [stranger, openApi],
      [stranger, listUsage],
    ] as const) {
      expect(policy.allows(caller, action)).toBe(policy.grant(caller, action) !== undefined);
    }
    expect(policy.allows(bot, listUsage)).toBe(true);
    expect(policy.allows(bot, migrate)).toBe(false);
    expect(new AccessPolicy(undefined).allows(stranger, download)).toBe(true);
  });

  it('never lets a rule limited to scopes grant what no scope names (the certificate routes)', () => {
    const scoped = new AccessPolicy([
      { callers: ['key:0123456789ab'], allow: ['read', 'write', 'secrets'], scopes: ['/subscriptions/s1/resourceGroups/rg-auto'] },
    ]);
    expect(scoped.grant(bot, { ...download, unscoped: true })).toBeUndefined();
    expect(scoped.grant(bot, { names: ['certificates-refresh'], access: 'write', unscoped: true })).toBeUndefined();
    expect(scoped.grant(bot, createGroup)).toMatchObject({ scopes: ['/subscriptions/s1/resourceGroups/rg-auto'] });
  });

  it("charges a key's share to the key, whoever signs in with it; a role's to each caller", () => {
    const shared = new AccessPolicy([
      { callers: ['key:0123456789ab'], allow: ['read'], rate: { readsPerMinute: 2 } },
      { callers: ['role:Bots'], allow: ['write'], rate: { writesPerMinute: 2 } },
    ]);
    const signedIn = (principal: string): Caller => ({
      primary: `principal:${principal}`,
      selectors: [`principal:${principal}`, 'key:0123456789ab', 'role:Bots'],
    });
    expect(shared.grant(signedIn('one'), listUsage)?.rateSubject).toBe('key:0123456789ab');
    expect(shared.grant(signedIn('two'), listUsage)?.rateSubject).toBe('key:0123456789ab');
    expect(shared.grant(signedIn('one'), createGroup)?.rateSubject).toBe('principal:one');
  });

  it('takes the loosest rate of the rules that allow an action: an unlimited rule lifts the limit', () => {
    const limited = new AccessPolicy([
      { callers: ['*'], allow: ['read'], rate: { readsPerMinute: 10 } },
      { callers: ['key:0123456789ab'], allow: ['Location_ListUsage'], rate: { readsPerMinute: 30, writesPerMinute: 1 } },
    ]);
    expect(limited.grant(bot, listUsage)?.rate).toEqual({ readsPerMinute: 30, writesPerMinute: undefined });
    expect(limited.grant(stranger, listUsage)?.rate).toEqual({ readsPerMinute: 10, writesPerMinute: undefined });
  });

  it("is today's behaviour when unset: everything, everywhere, and every orchestration", () => {
    const unset = new AccessPolicy(undefined);
    expect(unset.enforced).toBe(false);
    expect(unset.grant(stranger, download)).toEqual({});
    expect(unset.adminGrant(stranger)).toEqual({});
  });

  it('makes only callers with admin see every orchestration', () => {
    expect([bot, automation, operator, stranger].map((caller) => policy.adminGrant(caller))).toEqual([undefined, undefined, { scopes: undefined }, undefined]);
  });

  it('bounds admin by the scopes of the rules that give it, and lifts the bound with one rule without scopes', () => {
    const teamA: Caller = { primary: 'key:aaaaaaaaaaaa', selectors: ['key:aaaaaaaaaaaa', 'role:Team.A'] };
    const scoped = new AccessPolicy([
      { callers: ['key:aaaaaaaaaaaa'], allow: ['read', 'write', 'admin'], scopes: ['/subscriptions/s1/resourceGroups/rg-a'] },
      { callers: ['role:Team.A'], allow: ['admin'], scopes: ['/subscriptions/s1/resourceGroups/rg-a2'] },
    ]);
    expect(scoped.adminGrant(teamA)).toEqual({ scopes: ['/subscriptions/s1/resourceGroups/rg-a', '/subscriptions/s1/resourceGroups/rg-a2'] });
    const lifted = new AccessPolicy([
      ...rules,
      { callers: ['key:0123456789ab'], allow: ['admin'], scopes: ['/subscriptions/s1'] },
      { callers: ['key:0123456789ab'], allow: ['admin'] },
    ]);
    expect(lifted.adminGrant(bot)).toEqual({ scopes: undefined });
  });
});

describe('AccessPolicy.names and namesKind', () => {
  const chat = new AccessPolicy([
    { callers: ['slack:T1/U1', 'teams:AAAAAAAA-0000-4000-8000-000000000001/BBBBBBBB-0000-4000-8000-000000000002'], allow: ['read'] },
    { callers: ['*', 'role:Gateway.Operator'], allow: ['read'] },
  ]);

  it('names a selector a rule names itself, compared as grants compare it; never through * or a role', () => {
    expect(chat.names('slack:T1/U1')).toBe(true);
    expect(chat.names('slack:t1/u1')).toBe(false);
    expect(chat.names('teams:aaaaaaaa-0000-4000-8000-000000000001/bbbbbbbb-0000-4000-8000-000000000002')).toBe(true);
    expect(chat.names('slack:T1/U2')).toBe(false);
    expect(new AccessPolicy(undefined).names('slack:T1/U1')).toBe(false);
  });

  it('names a kind exactly when a caller of that kind can be named', () => {
    expect(chat.namesKind('slack:')).toBe(true);
    expect(chat.namesKind('teams:')).toBe(true);
    expect(chat.namesKind('key:')).toBe(false);
    expect(new AccessPolicy(undefined).namesKind('slack:')).toBe(false);
  });

  it("is one parsed policy for the app's settings", () => {
    const config = { ACCESS_POLICY: [{ callers: ['slack:T1/U1'], allow: ['read'] }] };
    expect(accessPolicyOf(config)).toBe(accessPolicyOf(config));
    expect(accessPolicyOf(config).names('slack:T1/U1')).toBe(true);
  });
});

describe('ACCESS_POLICY parsing', () => {
  const minimal = { MANAGEMENT_BASE_URL: 'https://management.example.com', LIFECYCLE_BASE_URL: 'https://lcs.example.com' };
  const problemsOf = (policyText: string) => {
    try {
      parseConfig({ ...minimal, ACCESS_POLICY: policyText });
    } catch (error) {
      return (error as ConfigError).problems;
    }
    return [];
  };

  it('accepts the example of docs/caller-rights.md', () => {
    expect(parseConfig({ ...minimal, ACCESS_POLICY: JSON.stringify(rules) }).ACCESS_POLICY).toHaveLength(rules.length);
  });

  it.each<[string, unknown, RegExp]>([
    ['an unknown class', [{ callers: ['*'], allow: ['reads'] }], /^ACCESS_POLICY \[0\]\.allow\[0\] each allow entry must be/],
    [
      'an unknown operation id',
      [
        { callers: ['*'], allow: ['read'] },
        { callers: ['*'], allow: ['ContainerGroups_Delete'] },
      ],
      /^ACCESS_POLICY \[1\]\.allow\[0\]/,
    ],
    ['a caller that is no selector', [{ callers: ['bob'], allow: ['read'] }], /^ACCESS_POLICY \[0\]\.callers\[0\] each caller must be/],
    ['a bad scope', [{ callers: ['*'], allow: ['read'], scopes: ['subscriptions/x'] }], /^ACCESS_POLICY \[0\]\.scopes\[0\] must start with/],
    ['a negative rate', [{ callers: ['*'], allow: ['read'], rate: { readsPerMinute: -1 } }], /^ACCESS_POLICY \[0\]\.rate\.readsPerMinute/],
    ['a field no rule has', [{ callers: ['*'], allow: ['read'], deny: ['write'] }], /^ACCESS_POLICY \[0\]/],
    ['no callers', [{ callers: [], allow: ['read'] }], /^ACCESS_POLICY \[0\]\.callers/],
  ])('stops start-up for %s, naming ACCESS_POLICY and the rule', (_title, value, message) => {
    expect(problemsOf(JSON.stringify(value))).toEqual([expect.stringMatching(message)]);
  });

  it('stops start-up for a policy that is not JSON', () => {
    expect(problemsOf('[{callers}]')).toEqual([expect.stringMatching(/^ACCESS_POLICY must be JSON/)]);
  });
});
