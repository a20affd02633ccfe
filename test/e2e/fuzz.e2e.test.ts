/**
 * Property-based fuzzing (fast-check) of every documented route's path, query, headers and
 * body, over HTTP against the real registrations: never a 5xx, every error in a documented
 * shape, and nothing that failed validation forwarded upstream.
 */
import fc from 'fast-check';
import { request } from 'undici';
import { appRoutes } from '../../src/routes/appRoutes';
import { operations, resolvePathTemplate, type OperationSpec } from '../../src/spec/catalogue';
import { startInProcessGateway, type InProcessGateway } from '../helpers/inProcessGateway';

let gateway: InProcessGateway;
beforeAll(async () => {
  gateway = await startInProcessGateway({ UPSTREAM_TIMEOUT_MS: '5000' });
});
afterAll(async () => {
  await gateway.stop();
});

/** Codes the app answers when it refused a request before calling the upstream. */
const refusedBeforeUpstream = new Set(['InvalidRequest', 'InvalidJson', 'PayloadTooLarge', 'UnsupportedMediaType', 'ScopeNotAllowed', 'RateLimited']);

const printable = (maxLength: number) => fc.stringMatching(new RegExp(`^[\\x20-\\x7e]{0,${maxLength}}$`));
const pathValue = fc.oneof(
  fc.string({ minLength: 1, maxLength: 30 }),
  fc.constantFrom('..', '.', '%2F', 'a/b', 'a\\b', ' ', 'valid-name', 'sdk-Namespace-2924', '42', 'apim1'),
  fc.uuid(),
  fc.stringMatching(/^[a-zA-Z][a-zA-Z0-9-]{5,20}[a-z0-9]$/),
);
const scopeValue = fc
  .array(fc.oneof(pathValue, fc.constantFrom('subscriptions', 'resourceGroups', 'providers')), { minLength: 1, maxLength: 6 })
  .map((segments) => segments.map(encodeURIComponent).join('/'));
const queryValue = fc.record(
  {
    apiVersion: fc.option(fc.oneof(printable(20), fc.constantFrom('2025-09-01', '2026-07-01', '2020-10-01', '2024-05-01', '2026-01-01')), { nil: undefined }),
    filter: fc.option(fc.oneof(printable(40), fc.constantFrom('atScope()', 'asTarget()', "assignedTo('x')", "principalId eq 'p'")), { nil: undefined }),
    pages: fc.option(fc.oneof(printable(5), fc.constantFrom('all', '2', '0')), { nil: undefined }),
    extra: fc.dictionary(fc.stringMatching(/^[a-z$]{1,8}$/), printable(10), { maxKeys: 2 }),
  },
  { requiredKeys: ['extra'] },
);
const validBodies = [
  { location: 'westus', properties: { containers: [{ name: 'c', properties: { image: 'nginx' } }] } },
  { properties: { privateLinkServiceConnectionState: { status: 'Approved' } } },
  { mode: 'NewIP' },
];
const bodyValue = fc.oneof(
  fc.constant(undefined),
  fc.json({ maxDepth: 4 }),
  printable(60),
  fc.constantFrom(...validBodies.map((body) => JSON.stringify(body))),
  // A valid body with one field replaced by anything.
  fc.tuple(fc.constantFrom(...validBodies), fc.jsonValue({ maxDepth: 2 })).map(([body, value]) => {
    const copy = structuredClone(body) as Record<string, unknown>;
    copy[Object.keys(copy)[0]!] = value;
    return JSON.stringify(copy);
  }),
);
const headerValues = fc.record({
  contentType: fc.option(fc.constantFrom('application/json', 'text/plain', 'application/merge-patch+json', 'garbage', 'application/json; charset=utf-8'), {
    nil: undefined,
  }),
  correlation: fc.option(printable(40), { nil: undefined }),
  ifMatch: fc.option(printable(20), { nil: undefined }),
});

interface QueryValue {
  apiVersion?: string;
  filter?: string;
  pages?: string;
  extra: Record<string, string>;
}

function urlOf(operation: OperationSpec, params: Record<string, string>, query: QueryValue): string {
  const path = resolvePathTemplate(operation, 'Vendor').replace(/\{(\w+)\}/g, (_match, name: string) => params[name] ?? 'x');
  const search = new URLSearchParams();
  if (query.apiVersion !== undefined) search.set('api-version', query.apiVersion);
  if (query.filter !== undefined) search.set('$filter', query.filter);
  if (query.pages !== undefined) search.set('gateway-pages', query.pages);
  for (const [name, value] of Object.entries(query.extra)) search.append(name, value);
  return `${gateway.url}/api/${path}?${search}`;
}

describe.each(operations.map((operation) => [operation.operationId, operation] as const))('%s', (_name, operation) => {
  const paramNames = Object.keys(operation.pathParams.shape);
  const params = fc.record(
    Object.fromEntries(paramNames.map((name) => [name, name === 'scope' ? scopeValue : pathValue.map(encodeURIComponent)])) as Record<
      string,
      fc.Arbitrary<string>
    >,
  );

  it('never answers 5xx, always in a documented shape, and forwards nothing it refused', async () => {
    let sent = 0;
    await fc.assert(
      fc.asyncProperty(params, queryValue, headerValues, bodyValue, async (pathParams, query, headers, body) => {
        const before = gateway.emulator.upstreamRequests().length;
        const response = await request(urlOf(operation, pathParams, query), {
          method: operation.method,
          headers: {
            ...(headers.contentType ? { 'content-type': headers.contentType } : {}),
            ...(headers.correlation ? { 'x-ms-client-request-id': headers.correlation } : {}),
            ...(headers.ifMatch ? { 'if-match': headers.ifMatch } : {}),
          },
          body: operation.method === 'GET' ? undefined : body,
        });
        const text = await response.body.text();
        sent += 1;
        expect(response.statusCode).toBeLessThan(500);
        if (response.statusCode >= 400) {
          const code = expectDocumentedError(text);
          // The app's own refusals carry their code under `error`; service health's upstream errors do not.
          if (refusedBeforeUpstream.has(code) && text.startsWith('{"error"')) expect(gateway.emulator.upstreamRequests().length).toBe(before);
        }
      }),
      { numRuns: 40 },
    );
    expect(sent).toBeGreaterThanOrEqual(40);
  });
});

/** An error answer in one of the documented shapes: the app's, ARM's, or service health's top-level one. */
function expectDocumentedError(text: string): string {
  const error = JSON.parse(text) as { error?: { code?: unknown; message?: unknown }; code?: unknown; message?: unknown };
  const code = error.error?.code ?? error.code;
  expect(typeof code).toBe('string');
  expect(typeof (error.error?.message ?? error.message)).toBe('string');
  return code as string;
}

describe.each(Object.values(appRoutes).map((route) => [route.name, route] as const))('app route %s', (_name, route) => {
  const paramNames = [...route.route.matchAll(/\{(\w+)\}/g)].map((match) => match[1]!);
  const params = fc.record(
    Object.fromEntries(paramNames.map((name) => [name, fc.oneof(pathValue, fc.uuid()).map(encodeURIComponent)])) as Record<string, fc.Arbitrary<string>>,
  );
  const query = fc.dictionary(fc.constantFrom('runtimeStatus', 'reason', 'code', 'x'), printable(20), { maxKeys: 2 });

  it('never answers 5xx (but for health, which reports a dependency), always in a documented shape, and calls no upstream', async () => {
    await fc.assert(
      fc.asyncProperty(params, query, headerValues, bodyValue, async (pathParams, search, headers, body) => {
        const before = gateway.emulator.upstreamRequests().length;
        const path = route.route.replace(/\{(\w+)\}/g, (_match, name: string) => pathParams[name] ?? 'x');
        const response = await request(`${gateway.url}/api/${path}?${new URLSearchParams(search)}`, {
          method: route.method,
          headers: headers.contentType ? { 'content-type': headers.contentType } : {},
          body: route.method === 'GET' ? undefined : body,
        });
        const text = await response.body.text();
        if (route.name !== 'health') expect(response.statusCode).toBeLessThan(500);
        if (response.statusCode >= 400) expectDocumentedError(text);
        // None of these routes calls the management upstream for a request (health only probes it).
        if (route.name !== 'health') expect(gateway.emulator.upstreamRequests().length).toBe(before);
      }),
      { numRuns: 25 },
    );
  });
});
