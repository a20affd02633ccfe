/** The ARM polling rules, as scenario tables named like core-lro's (put201Creating, post202Location…). */
import {
  finalReadOf,
  isUnfollowableAccept,
  movedPollUrlOf,
  pollIntervalMs,
  pollingModeOf,
  provisioningStateOf,
  readPoll,
  readsResultOf,
  resultUrlOf,
  terminalStateOf,
  type UpstreamAnswer,
} from '../../../src/orchestration/lroRules';

const answer = (status: number, headers: Record<string, string> = {}, body?: unknown): UpstreamAnswer => ({ status, headers, body });
const resource = (provisioningState?: string) => ({ properties: provisioningState === undefined ? {} : { provisioningState } });

describe('terminal states', () => {
  it.each<[string | undefined, string | undefined]>([
    ['Succeeded', 'Succeeded'],
    ['succeeded', 'Succeeded'],
    ['Failed', 'Failed'],
    ['Canceled', 'Canceled'],
    ['Cancelled', 'Canceled'],
    ['Creating', undefined],
    ['InProgress', undefined],
    [undefined, undefined],
  ])('%s → %s', (state, expected) => expect(terminalStateOf(state)).toBe(expected));

  it('reads no provisioningState as Succeeded', () => {
    expect(provisioningStateOf({ properties: {} })).toBe('Succeeded');
    expect(provisioningStateOf(undefined)).toBe('Succeeded');
    expect(provisioningStateOf(resource('Updating'))).toBe('Updating');
  });
});

describe('pollingModeOf', () => {
  it.each<[string, string, UpstreamAnswer, string | undefined]>([
    ['put200Succeeded: final', 'PUT', answer(200, {}, resource('Succeeded')), undefined],
    ['put200NoState: final', 'PUT', answer(200, {}, resource()), undefined],
    ['put201Creating: poll the resource', 'PUT', answer(201, {}, resource('Creating')), 'resource'],
    ['put201CreatingLocation: follow Location', 'PUT', answer(201, { location: 'https://m/op' }, resource('Pending')), 'location'],
    [
      'put201BothHeaders: prefer Azure-AsyncOperation',
      'PUT',
      answer(201, { location: 'https://m/op', 'azure-asyncoperation': 'https://m/st' }, resource('Pending')),
      'azure-async-operation',
    ],
    ['put202Accepted: poll', 'PUT', answer(202, {}, resource('Succeeded')), 'resource'],
    ['put400: final', 'PUT', answer(400, {}, { error: {} }), undefined],
    ['post202Location: follow Location', 'POST', answer(202, { location: 'https://m/op' }), 'location'],
    [
      'post202AsyncAndLocation: prefer Azure-AsyncOperation',
      'POST',
      answer(202, { location: 'https://m/op', 'azure-asyncoperation': 'https://m/st' }),
      'azure-async-operation',
    ],
    ['post200: final', 'POST', answer(200, {}, { ok: true }), undefined],
    ['post202NoHeaders: nothing to follow', 'POST', answer(202), undefined],
  ])('%s', (_title, method, initial, expected) => expect(pollingModeOf(method, initial)).toBe(expected));
});

describe('isUnfollowableAccept', () => {
  it.each<[string, string, UpstreamAnswer, boolean]>([
    ['post202NoHeaders: accepted with nothing to follow', 'POST', answer(202), true],
    ['post202Location', 'POST', answer(202, { location: 'https://m/op' }), false],
    ['post200: final', 'POST', answer(200), false],
    ['put202NoHeaders: the resource can be read', 'PUT', answer(202), false],
  ])('%s', (_title, method, initial, expected) => expect(isUnfollowableAccept(method, initial)).toBe(expected));
});

describe('resultUrlOf and finalReadOf', () => {
  const both = answer(202, { location: 'https://m/result', 'azure-asyncoperation': 'https://m/st' });
  it.each<[string, string, Parameters<typeof resultUrlOf>[1], UpstreamAnswer, string | undefined]>([
    ['post202AsyncAndLocation: the result is read on Location', 'POST', 'azure-async-operation', both, 'https://m/result'],
    ['post202Location: Location answers the result itself', 'POST', 'location', answer(202, { location: 'https://m/result' }), undefined],
    ['post202Async: the status body is all there is', 'POST', 'azure-async-operation', answer(202, { 'azure-asyncoperation': 'https://m/st' }), undefined],
    ['put201BothHeaders: the resource is read on its own URL', 'PUT', 'azure-async-operation', both, undefined],
    ['delete202BothHeaders: no result', 'DELETE', 'azure-async-operation', both, undefined],
  ])('%s', (_title, method, mode, initial, expected) => expect(resultUrlOf(method, mode, initial)).toBe(expected));

  it("reads a PUT's resource, else a POST's result as a Location status, else nothing", () => {
    expect(finalReadOf({ needsFinalGet: true }, { mode: 'azure-async-operation', resourceUrl: 'https://m/r' })).toEqual({
      mode: 'resource',
      url: 'https://m/r',
      method: 'GET',
    });
    expect(finalReadOf({ needsFinalGet: false }, { mode: 'azure-async-operation', resourceUrl: 'https://m/r', resultUrl: 'https://m/result' })).toEqual({
      mode: 'location',
      url: 'https://m/result',
      method: 'POST',
    });
    expect(finalReadOf({ needsFinalGet: false }, { mode: 'azure-async-operation', resourceUrl: 'https://m/r' })).toBeUndefined();
  });

  it('post202AsyncAndLocationResultNotReady: a poll moved to the result reads it as a Location status, and nothing after', () => {
    const movedToResult = { mode: 'location', resourceUrl: 'https://m/r', resultUrl: 'https://m/result' } as const;
    expect(readsResultOf(movedToResult)).toBe(true);
    expect(readsResultOf({ mode: 'azure-async-operation', resultUrl: 'https://m/result' })).toBe(false);
    expect(readsResultOf({ mode: 'location' })).toBe(false);
    expect(finalReadOf({ needsFinalGet: false }, movedToResult)).toBeUndefined();
  });
});

describe('movedPollUrlOf', () => {
  it.each<[string, Parameters<typeof movedPollUrlOf>[0], UpstreamAnswer, string | undefined]>([
    ['location mode, a new Location', 'location', answer(202, { location: 'https://m/op2' }), 'https://m/op2'],
    ['location mode, no Location', 'location', answer(202), undefined],
    ['location mode ignores Azure-AsyncOperation', 'location', answer(202, { 'azure-asyncoperation': 'https://m/st2' }), undefined],
    ['async mode, a new Azure-AsyncOperation', 'azure-async-operation', answer(200, { 'azure-asyncoperation': 'https://m/st2' }), 'https://m/st2'],
    ['resource mode never moves', 'resource', answer(200, { location: 'https://m/op2' }), undefined],
  ])('%s', (_title, mode, polled, expected) => expect(movedPollUrlOf(mode, polled)).toBe(expected));
});

describe('readPoll', () => {
  it.each<[string, Parameters<typeof readPoll>[0], string, UpstreamAnswer, Record<string, unknown>]>([
    ['async InProgress', 'azure-async-operation', 'PUT', answer(200, {}, { status: 'InProgress' }), { kind: 'running', state: 'InProgress' }],
    [
      'async Succeeded on a PUT: GET the resource',
      'azure-async-operation',
      'PUT',
      answer(200, {}, { status: 'Succeeded' }),
      { kind: 'succeeded', needsFinalGet: true },
    ],
    [
      'async Failed keeps the error',
      'azure-async-operation',
      'PUT',
      answer(200, {}, { status: 'Failed', error: { code: 'Boom' } }),
      { kind: 'failed', state: 'Failed', error: { status: 'Failed', error: { code: 'Boom' } } },
    ],
    ['async 404: the read failed, not the operation', 'azure-async-operation', 'PUT', answer(404), { kind: 'read-failed', status: 404 }],
    ['async 503: the read failed', 'azure-async-operation', 'PUT', answer(503), { kind: 'read-failed', status: 503 }],
    ['location 202: running', 'location', 'POST', answer(202), { kind: 'running' }],
    ['location 200 on a POST: this is the result', 'location', 'POST', answer(200, {}, { id: 'x' }), { kind: 'succeeded', needsFinalGet: false }],
    ['location 200 on a PUT: GET the resource', 'location', 'PUT', answer(200, {}, { id: 'x' }), { kind: 'succeeded', needsFinalGet: true }],
    [
      'location 400: the operation failed, error kept',
      'location',
      'POST',
      answer(400, {}, { error: { code: 'Nope' } }),
      { kind: 'failed', status: 400, error: { error: { code: 'Nope' } } },
    ],
    ['location 429: the read failed', 'location', 'POST', answer(429), { kind: 'read-failed', status: 429 }],
    ['resource Updating: running', 'resource', 'PUT', answer(200, {}, resource('Updating')), { kind: 'running', state: 'Updating' }],
    ['resource Succeeded', 'resource', 'PUT', answer(200, {}, resource('Succeeded')), { kind: 'succeeded', needsFinalGet: false }],
    ['resource Canceled', 'resource', 'PUT', answer(200, {}, resource('Canceled')), { kind: 'failed', state: 'Canceled' }],
    ['resource 500: the read failed', 'resource', 'PUT', answer(500), { kind: 'read-failed' }],
    // The reader's token refused (passthrough: the reader, not the starter): a failed read.
    ['location 401: the read failed, not the operation', 'location', 'POST', answer(401), { kind: 'read-failed', status: 401 }],
    ['location 403: the read failed, not the operation', 'location', 'PUT', answer(403), { kind: 'read-failed', status: 403 }],
    ['resource 403: the read failed', 'resource', 'PUT', answer(403), { kind: 'read-failed', status: 403 }],
    // No redirects in the protocol: a 3xx is the upstream's error, never the result.
    [
      'location 302: the upstream broke the protocol',
      'location',
      'POST',
      answer(302, { location: 'https://m/x' }),
      { kind: 'failed', status: 502, error: { error: { code: 'UpstreamBadResponse' } } },
    ],
    ['location 304: the upstream broke the protocol', 'location', 'PUT', answer(304), { kind: 'failed', status: 502 }],
    ['async 301: the upstream broke the protocol', 'azure-async-operation', 'PUT', answer(301), { kind: 'failed', status: 502 }],
  ])('%s', (_title, mode, method, polled, expected) => expect(readPoll(mode, method, polled)).toMatchObject(expected));
});

describe('pollIntervalMs', () => {
  const policy = { defaultMs: 60_000, floorMs: 1000, ceilingMs: 600_000 };
  it.each<[string | undefined, number]>([
    [undefined, 60_000],
    ['5', 5000],
    ['0', 1000],
    ['99999999', 600_000],
    ['1e308', 60_000],
    ['-3', 60_000],
    ['2.5', 60_000],
    ['Wed, 21 Oct 2015 07:28:00 GMT', 60_000],
    ['9999999999999999999999', 60_000],
  ])('Retry-After %s → %i ms', (header, expected) => expect(pollIntervalMs(header, policy)).toBe(expected));
});
