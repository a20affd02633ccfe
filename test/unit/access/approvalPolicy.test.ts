/** The approval part of ACCESS_POLICY: which starts wait (the stricter rule wins), who approves, and the start-up checks. */
import { AccessPolicy, matchesAny, type AccessRule, type Action, type Caller } from '../../../src/access/accessPolicy';
import { ConfigError, parseConfig } from '../../../src/settings/config';

const starter: Caller = { primary: 'key:0123456789ab', selectors: ['key:0123456789ab'] };
const approver: Caller = { primary: 'principal:aaaa-1111', selectors: ['principal:aaaa-1111', 'key:feedfacecafe', 'role:Gateway.Approver'] };
const chatApprover: Caller = { primary: 'slack:T1/U2', selectors: ['slack:T1/U2'] };
const stranger: Caller = { primary: 'key:999999999999', selectors: ['key:999999999999'] };

const migrate: Action = { names: ['ApiManagementService_MigrateToStv2', 'apiManagementService-migrateToStv2'], access: 'write' };
const createGroup: Action = { names: ['ContainerGroups_CreateOrUpdate', 'containerGroups-createOrUpdate'], access: 'write' };
const rg = (name: string) => `subscriptions/s1/resourceGroups/${name}/providers/Vendor.ApiManagement/service/apim1/migrateToStv2`;

const rules: AccessRule[] = [
  // Writes anywhere without approval...
  { callers: ['key:0123456789AB'], allow: ['read', 'write'] },
  // ...but migrations in production wait for one approval, and anything in the payments group for two.
  {
    callers: ['key:0123456789ab'],
    allow: ['ApiManagementService_MigrateToStv2'],
    scopes: ['/subscriptions/s1/resourceGroups/prod'],
    approval: { count: 1, approvers: ['role:Gateway.Approver', 'slack:T1/U2'], expiresAfterMinutes: 120 },
  },
  {
    callers: ['key:0123456789ab'],
    allow: ['write'],
    scopes: ['/subscriptions/s1/resourceGroups/payments'],
    approval: { count: 2, approvers: ['key:FEEDFACECAFE', 'principal:bbbb-2222'] },
  },
  {
    callers: ['key:0123456789ab'],
    allow: ['ApiManagementService_MigrateToStv2'],
    scopes: ['/subscriptions/s1/resourceGroups/payments'],
    approval: { count: 1, approvers: ['role:Gateway.Approver'], expiresAfterMinutes: 30 },
  },
];
const policy = new AccessPolicy(rules);

describe('AccessPolicy.approvalFor', () => {
  it.each<[string, Action, string, ReturnType<AccessPolicy['approvalFor']>]>([
    [
      'a migration in production waits for one approval: the stricter rule wins over the one allowing it without',
      migrate,
      rg('prod'),
      { required: 1, approvers: ['role:Gateway.Approver', 'slack:T1/U2'], expiresAfterMinutes: 120 },
    ],
    ['a migration elsewhere needs none', migrate, rg('dev'), undefined],
    ['another operation in production needs none: the rule names migrations only', createGroup, rg('prod'), undefined],
    [
      'of two asking rules the one asking more approvals is taken, with the shortest expiry of both',
      migrate,
      rg('payments'),
      { required: 2, approvers: ['key:FEEDFACECAFE', 'principal:bbbb-2222'], expiresAfterMinutes: 30 },
    ],
    [
      'a class the rule allows counts as its operations do',
      createGroup,
      rg('payments'),
      { required: 2, approvers: ['key:FEEDFACECAFE', 'principal:bbbb-2222'] },
    ],
  ])('%s', (_title, action, target, expected) => {
    expect(policy.approvalFor(starter, action, target)).toEqual(expected);
  });

  it('asks nothing of a caller no asking rule names, nor without a policy', () => {
    expect(policy.approvalFor(stranger, migrate, rg('prod'))).toBeUndefined();
    expect(new AccessPolicy(undefined).approvalFor(starter, migrate, rg('prod'))).toBeUndefined();
  });
});

describe('approvers', () => {
  it('are callers named by key, principal, role or chat user, compared as callers are', () => {
    expect(policy.namesApprover(approver)).toBe(true);
    expect(policy.namesApprover(chatApprover)).toBe(true);
    expect(policy.namesApprover(starter)).toBe(false);
    expect(matchesAny(approver, ['key:FEEDFACECAFE'])).toBe(true);
    expect(matchesAny(stranger, ['*'])).toBe(false);
  });

  it('turn their chat platform on as callers do', () => {
    expect(policy.namesKind('slack:')).toBe(true);
    expect(policy.names('slack:T1/U2')).toBe(true);
    expect(policy.namesKind('teams:')).toBe(false);
  });
});

describe('approval parsing and start-up checks', () => {
  const minimal = { MANAGEMENT_BASE_URL: 'https://management.example.com', LIFECYCLE_BASE_URL: 'https://lcs.example.com' };
  const problemsOf = (rulesGiven: unknown, settings: Record<string, string> = {}) => {
    try {
      parseConfig({ ...minimal, ...settings, ACCESS_POLICY: JSON.stringify(rulesGiven) });
    } catch (error) {
      return (error as ConfigError).problems;
    }
    return [];
  };
  const asking = (approval: unknown) => [
    { callers: ['key:0123456789ab'], allow: ['write'] },
    { callers: ['key:0123456789ab'], allow: ['write'], approval },
  ];

  it('accepts the rules above and the settings defaults', () => {
    const config = parseConfig({ ...minimal, ACCESS_POLICY: JSON.stringify(rules) });
    expect(config.ACCESS_POLICY?.[1]?.approval).toEqual(rules[1]!.approval);
    expect([config.APPROVAL_DEFAULT_MINUTES, config.APPROVAL_MAX_MINUTES, config.APPROVAL_MAX_PENDING_PER_CALLER, config.APPROVAL_MAX_PENDING]).toEqual([
      60, 1440, 20, 1000,
    ]);
  });

  it('stops start-up for a rule asking a longer wait than APPROVAL_MAX_MINUTES, naming the rule', () => {
    expect(problemsOf(asking({ count: 1, approvers: ['role:Approver'], expiresAfterMinutes: 1441 }))).toEqual([
      expect.stringMatching(/^ACCESS_POLICY \[1\]\.approval\.expiresAfterMinutes \(1441\) must not be above APPROVAL_MAX_MINUTES \(1440\)/),
    ]);
    expect(problemsOf(asking({ count: 1, approvers: ['role:Approver'], expiresAfterMinutes: 1441 }), { APPROVAL_MAX_MINUTES: '2880' })).toEqual([]);
    expect(problemsOf([], { APPROVAL_DEFAULT_MINUTES: '90', APPROVAL_MAX_MINUTES: '60' })).toEqual([
      expect.stringMatching(/^APPROVAL_DEFAULT_MINUTES \(90\) must not be above APPROVAL_MAX_MINUTES/),
    ]);
  });

  it.each<[string, unknown, RegExp]>([
    ['no approvers', { count: 1, approvers: [] }, /^ACCESS_POLICY \[1\]\.approval\.approvers/],
    [
      'more than 20 approvers',
      { count: 1, approvers: Array.from({ length: 21 }, (_, index) => `role:Approver${index}`) },
      /^ACCESS_POLICY \[1\]\.approval\.approvers/,
    ],
    ['* as an approver', { count: 1, approvers: ['*'] }, /^ACCESS_POLICY \[1\]\.approval\.approvers\[0\] each approver must be/],
    ['no approval asked', { count: 0, approvers: ['role:Approver'] }, /^ACCESS_POLICY \[1\]\.approval\.count/],
    ['more than 10 approvals', { count: 11, approvers: ['role:Approver'] }, /^ACCESS_POLICY \[1\]\.approval\.count/],
    ['a field an approval has not', { count: 1, approvers: ['role:Approver'], quorum: 2 }, /^ACCESS_POLICY \[1\]\.approval has a property/],
  ])('stops start-up for %s', (_title, approval, message) => {
    expect(problemsOf(asking(approval))).toEqual([expect.stringMatching(message)]);
  });

  it('accepts 20 approvers', () => {
    expect(problemsOf(asking({ count: 2, approvers: Array.from({ length: 20 }, (_, index) => `role:Approver${index}`) }))).toEqual([]);
  });
});
