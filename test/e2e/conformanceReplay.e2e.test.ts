/**
 * Every official example of a catalogued operation, replayed through the app over HTTP: the
 * request is accepted and reaches the upstream unchanged, and the upstream's answer (each
 * documented status) comes back unchanged.
 */
import { request } from 'undici';
import { fillPath, operations, resolvePathTemplate } from '../../src/spec/catalogue';
import { loadConformanceExamples } from '../helpers/conformance';
import { emulatorToken, startGateway, type GatewayFixture } from '../../tools/harness/gatewayFixture';

let gateway: GatewayFixture;
beforeAll(async () => {
  gateway = await startGateway();
});
afterAll(async () => {
  await gateway.stop();
});

const cases = loadConformanceExamples().flatMap((example) => {
  const operation = operations.find((candidate) => candidate.operationId === example.operationId);
  return operation
    ? Object.entries(example.responses).map(([status, response]) => [`${example.file} ${status}`, example, operation, Number(status), response] as const)
    : [];
});

describe('conformance replay through the app', () => {
  it('replays at least one example of every catalogued management operation', () => {
    const replayed = new Set(cases.map(([, , operation]) => operation.operationId));
    expect(operations.filter((operation) => operation.upstream === 'management' && !replayed.has(operation.operationId))).toEqual([]);
  });

  it.each(cases)('%s', async (_title, example, operation, status, upstreamAnswer) => {
    gateway.emulator.reset();
    gateway.emulator.script({ kind: 'answer', status, headers: upstreamAnswer.headers, body: upstreamAnswer.body });
    const params = Object.fromEntries(Object.keys(operation.pathParams.shape).map((name) => [name, String(example.parameters[name])]));
    const path = fillPath(resolvePathTemplate(operation, 'Vendor'), params);
    const query = new URLSearchParams();
    for (const name of ['api-version', '$filter']) if (example.parameters[name] !== undefined) query.set(name, String(example.parameters[name]));
    const requestBody = operation.body ? example.parameters[operation.body.name] : undefined;
    const bodyText = requestBody === undefined ? undefined : JSON.stringify(requestBody, null, 2);

    const response = await request(`${gateway.api(path)}?${query}`, {
      method: operation.method,
      headers: bodyText ? { 'content-type': 'application/json' } : {},
      body: bodyText,
    });
    const text = await response.body.text();

    const [seen] = gateway.emulator.upstreamRequests();
    expect(seen).toBeDefined();
    expect(seen!.method).toBe(operation.method);
    expect(decodeURIComponent(seen!.path)).toBe(`/${decodeURIComponent(path)}`);
    expect(seen!.query['api-version']).toBe(example.parameters['api-version']);
    if (example.parameters.$filter) expect(seen!.query.$filter).toBe(example.parameters.$filter);
    expect(seen!.headers.authorization).toBe(`Bearer ${emulatorToken}`);
    expect(seen!.body).toBe(bodyText ?? '');

    expect(response.statusCode).toBe(status);
    if (upstreamAnswer.body === undefined) expect(text).toBe('');
    else expect(JSON.parse(text)).toEqual(upstreamAnswer.body);
    expect(response.headers['x-ms-request-id']).toMatch(/^[0-9a-f-]{36}$/);

    // An unfinished long-running answer is tracked by the app: Location points at the app, not
    // the upstream. Every other header the upstream sent comes back as it came.
    const orchestrationId = response.headers['x-orchestration-id'];
    const tracked = orchestrationId !== undefined && response.headers.link !== undefined;
    for (const [name, value] of Object.entries(upstreamAnswer.headers ?? {})) {
      if (tracked && name.toLowerCase() === 'location') expect(response.headers.location).toBe(`${gateway.app.url}/api/operations/${orchestrationId}`);
      else expect(response.headers[name.toLowerCase()]).toBe(value);
    }
    if (tracked) {
      // Stop tracking, so the next replay of the same request is not taken for a duplicate: 202,
      // or 410 when the emulator's operation already ended (nothing is then tracked).
      const terminated = await request(gateway.api(`orchestrations/${orchestrationId}/terminate`), { method: 'POST' });
      expect([202, 410]).toContain(terminated.statusCode);
      await terminated.body.dump();
    }
  });
});
