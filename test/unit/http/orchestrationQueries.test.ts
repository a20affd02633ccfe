/** The orchestration routes' parameters, the start's notify target, and the bounds on held waits. */
import { GatewayError } from '../../../src/errors';
import { notifyTargetsOf } from '../../../src/calls/notifyTarget';
import { bulkRequestOf, countsRequestOf, listRequestOf, purgeRequestOf, scanBoundsOf, waitSecondsOf } from '../../../src/calls/orchestrationQueries';
import { ConfigError, parseConfig } from '../../../src/settings/config';
import { WaitSlots } from '../../../src/access/waitSlots';
import { cursorOf, decodeCursor, encodeCursor } from '../../../src/orchestration/summaryQuery';

const headers = (values: Record<string, string> = {}) => ({ get: (name: string) => values[name] ?? null });
const refusal = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    return error as GatewayError;
  }
  throw new Error('not refused');
};

describe('listRequestOf', () => {
  it("reads Durable Functions' names", () => {
    const query = new URLSearchParams(
      'runtimeStatus=running,FAILED&name=ContainerGroups_CreateOrUpdate&createdTimeFrom=2026-01-01&createdTimeTo=2026-02-01T10:00:00%2B01:00&instanceIdPrefix=6F1A&top=5&showInput=true',
    );
    const token = encodeCursor({ marker: 'm1' });
    expect(listRequestOf(query, headers({ 'x-ms-continuation-token': token }))).toEqual({
      filter: {
        statuses: ['Running', 'Failed'],
        names: ['ContainerGroups_CreateOrUpdate'],
        createdFrom: '2026-01-01T00:00:00.000Z',
        createdTo: '2026-02-01T09:00:00.000Z',
        idPrefix: '6f1a',
      },
      top: 5,
      showInput: true,
      continuationToken: token,
    });
    expect(listRequestOf(new URLSearchParams('runtimeStatus='), headers())).toMatchObject({ filter: { statuses: undefined }, top: 100, showInput: false });
  });

  it('names every bad parameter at once', () => {
    const error = refusal(() =>
      listRequestOf(new URLSearchParams('runtimeStatus=Sleeping&name=a b&createdTimeFrom=yesterday&instanceIdPrefix=../x&top=0&showInput=maybe'), headers()),
    );
    expect(error.status).toBe(400);
    expect(error.details!.map((detail) => detail.target).sort()).toEqual(['createdTimeFrom', 'instanceIdPrefix', 'name', 'runtimeStatus', 'showInput', 'top']);
  });
});

describe('purgeRequestOf', () => {
  it.each([
    ['no filter at all', ''],
    ['a running status', 'runtimeStatus=Running'],
  ])('refuses %s', (_title, query) => {
    expect(refusal(() => purgeRequestOf(new URLSearchParams(query), headers())).status).toBe(400);
  });

  it('takes ended statuses and times', () => {
    expect(purgeRequestOf(new URLSearchParams('runtimeStatus=Completed,Terminated&createdTimeTo=2026-01-01'), headers()).filter).toMatchObject({
      statuses: ['Completed', 'Terminated'],
      createdTo: '2026-01-01T00:00:00.000Z',
    });
  });
});

describe('bulkRequestOf', () => {
  it.each<[string, 'terminate' | 'restart', string, string]>([
    ['no filter at all', 'terminate', '', 'query'],
    ['no filter at all', 'restart', 'dryRun=true', 'query'],
    ['only statuses terminate does not act on', 'terminate', 'runtimeStatus=Completed,Failed', 'runtimeStatus'],
    ['only statuses restart does not act on', 'restart', 'runtimeStatus=Running', 'runtimeStatus'],
    ['a dryRun that is not true or false', 'restart', 'name=ContainerGroups_CreateOrUpdate&dryRun=yes', 'dryRun'],
  ])('refuses %s (%s)', (_title, action, query, target) => {
    const error = refusal(() => bulkRequestOf(action, new URLSearchParams(query), headers()));
    expect(error.status).toBe(400);
    expect(error.details!.map((detail) => detail.target)).toContain(target);
  });

  it('holds the statuses to those the action takes, all of them when none is named, and reads dryRun', () => {
    expect(bulkRequestOf('terminate', new URLSearchParams('runtimeStatus=Running,Failed&dryRun=TRUE'), headers())).toMatchObject({
      filter: { statuses: ['Running'] },
      dryRun: true,
    });
    expect(bulkRequestOf('restart', new URLSearchParams('instanceIdPrefix=ab'), headers())).toMatchObject({
      filter: { statuses: ['Completed', 'Failed', 'Terminated'], idPrefix: 'ab' },
      dryRun: false,
    });
    expect(bulkRequestOf('terminate', new URLSearchParams('name=ContainerGroups_CreateOrUpdate'), headers()).filter.statuses).toEqual(['Pending', 'Running']);
  });
});

describe('countsRequestOf', () => {
  it("takes the list's filters, none required, and refuses a forged token", () => {
    expect(countsRequestOf(new URLSearchParams(''), headers())).toEqual({ filter: expect.objectContaining({ statuses: undefined }) });
    expect(refusal(() => countsRequestOf(new URLSearchParams('runtimeStatus=Sleeping'), headers())).status).toBe(400);
    expect(refusal(() => countsRequestOf(new URLSearchParams(''), headers({ 'x-ms-continuation-token': 'not*a*token' }))).status).toBe(400);
  });
});

describe("a bulk action's continuation token", () => {
  it('keeps when the action began, and nothing but a time as toISOString writes it', () => {
    const asOf = '2026-03-01T10:00:00.000Z';
    expect(decodeCursor(encodeCursor({ marker: 'm', after: 'instances/a.json', asOf }))).toEqual({ marker: 'm', after: 'instances/a.json', asOf });
    expect(cursorOf(encodeCursor({ marker: 'm', asOf: 'yesterday' } as never))).toBeUndefined();
    expect(cursorOf(encodeCursor({ asOf: 42 } as never))).toBeUndefined();
  });
});

describe('the bounds of bulk actions and queries', () => {
  const minimal = { MANAGEMENT_BASE_URL: 'https://management.example.com/', LIFECYCLE_BASE_URL: 'https://lcs.example.com' };
  it('defaults to 100 a bulk call and 10,000 documents a query, and refuses values past their bounds', () => {
    const config = parseConfig(minimal);
    expect(config.ORCHESTRATION_BULK_BATCH).toBe(100);
    expect(scanBoundsOf(config)).toEqual({ maxScanned: 10_000, timeBudgetMs: 5000 });
    expect(parseConfig({ ...minimal, ORCHESTRATION_BULK_BATCH: '1000' }).ORCHESTRATION_BULK_BATCH).toBe(1000);
    for (const settings of [{ ORCHESTRATION_BULK_BATCH: '1001' }, { ORCHESTRATION_BULK_BATCH: '0' }, { ORCHESTRATION_QUERY_MAX_SCANNED: '1000001' }]) {
      expect(() => parseConfig({ ...minimal, ...settings })).toThrow(ConfigError);
    }
  });
});

describe('waitSecondsOf', () => {
  it.each<[string, number | undefined | 'problem']>([
    ['', undefined],
    ['gateway-wait=30', 30],
    ['Gateway-Wait=30', 30],
    ['gateway-wait=999999', 200],
    ['gateway-wait=0', 0],
    ['gateway-wait=-1', 'problem'],
    ['gateway-wait=1.5', 'problem'],
    ['gateway-wait=soon', 'problem'],
  ])('%s → %s', (query, expected) => {
    const seconds = waitSecondsOf(new URLSearchParams(query), 200);
    expect(typeof seconds === 'object' ? 'problem' : seconds).toBe(expected);
  });
});

describe('notifyTargetsOf', () => {
  const allowed = ['https://hooks.example.com', 'http://127.0.0.1:8080'];
  it.each<[string, string | null, boolean, string[] | undefined | string]>([
    ['no header', null, true, undefined],
    ['an allowed origin', 'https://hooks.example.com/gateway?key=k', true, ['https://hooks.example.com/gateway?key=k']],
    ['an allowed origin with its port', 'http://127.0.0.1:8080/h', true, ['http://127.0.0.1:8080/h']],
    ['another origin', 'https://evil.example.com/h', true, 'NotifyTargetNotAllowed'],
    ['another port of an allowed host', 'https://hooks.example.com:8443/h', true, 'NotifyTargetNotAllowed'],
    ['user info hiding the host', 'https://hooks.example.com@evil.example.com/h', true, 'InvalidRequest'],
    ['not a URL', 'hooks', true, 'InvalidRequest'],
    ['another scheme', 'ftp://hooks.example.com/h', true, 'InvalidRequest'],
    ['an operation that does not run long', 'https://hooks.example.com/h', false, 'InvalidRequest'],
    // A chat end's marker would make the end an unsigned chat post (or one to SLACK_WEBHOOK_URL).
    ['a fragment marking a chat end', 'https://hooks.example.com/h#chatops=slack&until=1', true, 'InvalidRequest'],
    ['an empty fragment', 'https://hooks.example.com/h#', true, 'InvalidRequest'],
  ])('%s', (_title, value, longRunning, expected) => {
    if (typeof expected === 'string') expect(refusal(() => notifyTargetsOf(value, allowed, longRunning)).code).toBe(expected);
    else expect(notifyTargetsOf(value, allowed, longRunning)).toEqual(expected);
  });
});

describe('continuation tokens', () => {
  it('are refused with the other problems, before the store is asked, when their texts hold what no listing gives', () => {
    const forged = [{ marker: '\ud800' }, { marker: '1!\u0000\u0001\u001f' }, { after: 'instances/\udfff.json' }, { marker: 'm', after: 'line\nbreak' }].map(
      (cursor) => encodeCursor(cursor),
    );
    for (const token of forged) {
      for (const parse of [
        () => listRequestOf(new URLSearchParams('top=0'), headers({ 'x-ms-continuation-token': token })),
        () => purgeRequestOf(new URLSearchParams(), headers({ 'x-ms-continuation-token': token })),
      ]) {
        const error = refusal(parse);
        expect(error.status).toBe(400);
        expect(error.details!.map((detail) => detail.target)).toContain('x-ms-continuation-token');
      }
      expect(refusal(() => decodeCursor(token)).status).toBe(400);
    }
  });

  it('round-trip, and anything else is a 400', () => {
    expect(decodeCursor(encodeCursor({ marker: 'm1', after: 'instances/x.json' }))).toEqual({ marker: 'm1', after: 'instances/x.json' });
    for (const token of ['not base64url!', Buffer.from('[1,2]').toString('base64url'), Buffer.from('{"marker":5}').toString('base64url'), 'x'.repeat(5000)]) {
      expect(refusal(() => decodeCursor(token)).status).toBe(400);
    }
  });
});

describe('WaitSlots', () => {
  const now = 1_000_000;

  it('refuses a caller past its own bound, with Retry-After when its first wait runs out', () => {
    const slots = new WaitSlots({ perCaller: 2, perInstance: 10 });
    slots.take('key:a', now + 30_000, now);
    slots.take('key:a', now + 4_200, now);
    const error = refusal(() => slots.take('key:a', now + 60_000, now));
    expect(error).toMatchObject({ code: 'TooManyWaits', status: 429, target: 'gateway-wait', headers: { 'retry-after': '5' } });
    expect(error.message).toContain('GATEWAY_WAIT_MAX_PER_CALLER');
    // Another caller is held to its own bound only.
    expect(() => slots.take('key:b', now + 1000, now)).not.toThrow();
  });

  it('refuses any caller past the instance bound, and frees a slot once, when its wait ends', () => {
    const slots = new WaitSlots({ perCaller: 5, perInstance: 2 });
    const release = slots.take('key:a', now + 500, now);
    slots.take('key:b', now + 9_000, now);
    const error = refusal(() => slots.take('key:c', now + 1000, now));
    expect(error).toMatchObject({ code: 'TooManyWaits', headers: { 'retry-after': '1' } });
    expect(error.message).toContain('GATEWAY_WAIT_MAX_PER_INSTANCE');
    release();
    release();
    expect(slots.held).toBe(1);
    slots.take('key:c', now + 1000, now);
    expect(() => slots.take('key:d', now + 1000, now)).toThrow(GatewayError);
  });
});
