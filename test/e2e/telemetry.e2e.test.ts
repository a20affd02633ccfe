/**
 * Telemetry as an operator sees it in a collector: the app exports OTLP over HTTP (JSON) to a
 * receiver in the test. One container group start is one trace: the caller's call, the upstream
 * PUT (whose traceparent the emulator received), the storage calls, every poll (linked to the
 * start, made by two app processes in turn: the first is stopped mid-operation) and the
 * notification, whose traceparent the receiving bot saw. The metrics are asserted by name and
 * value, no secret is in any payload, and an app without exporter settings sends nothing.
 * (The http/protobuf encoding, sampling and the callers' refusal counters: test/integration/telemetryExport.test.ts.)
 */
import { randomBytes } from 'node:crypto';
import { request } from 'undici';
import { startApp, type AppProcess } from '../../tools/harness/appProcess';
import { startChatPostReceiver, type ChatPostReceiver } from '../helpers/chatPostReceiver';
import { sendChat, slackSignedHeaders } from '../helpers/chatSigning';
import { emulatorToken, notifyingFastPolling, startGateway, type GatewayFixture } from '../../tools/harness/gatewayFixture';
import { latestTotal, startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../helpers/otlpReceiver';
import { scanForSecrets } from '../../tools/harness/secretScan';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhookReceiver';

const subscription = '00000000-0000-0000-0000-000000000000';
const groupPath = `subscriptions/${subscription}/resourceGroups/rg/providers/Vendor.ContainerInstance/containerGroups/traced?api-version=2025-09-01`;
const groupBody = JSON.stringify({ location: 'westus', properties: { containers: [{ name: 'web', properties: { image: 'nginx' } }] } });
const operation = 'ContainerGroups_CreateOrUpdate';
const usagesPath = `subscriptions/${subscription}/providers/Vendor.ContainerInstance/locations/westus/usages?api-version=2026-07-01`;
/** The caller's own trace: the app's span of its call is a child of this one. */
const callerTraceId = randomBytes(16).toString('hex');
const callerSpanId = randomBytes(8).toString('hex');
const secret = `whsec_${randomBytes(32).toString('base64')}`;
const slackSecret = randomBytes(16).toString('hex');
const slackUser = { team: 'T0TRACE', user: 'UOPS1' };

async function until<T>(what: string, find: () => T | undefined | false, limitMs = 60_000): Promise<T> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const found = find();
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function getJson(url: string, headers: Record<string, string> = {}) {
  const response = await request(url, { headers });
  return { status: response.statusCode, json: (await response.body.json()) as Record<string, unknown> };
}

describe('telemetry exported over OTLP', () => {
  let collector: OtlpReceiver;
  let hooks: WebhookReceiver;
  let chatPosts: ChatPostReceiver;
  let gateway: GatewayFixture;
  let restarted: AppProcess | undefined;
  let plain: AppProcess | undefined;
  beforeAll(async () => {
    collector = await startOtlpReceiver();
    hooks = await startWebhookReceiver(secret);
    chatPosts = await startChatPostReceiver();
    gateway = await startGateway(
      {
        ...notifyingFastPolling(hooks.origin, secret),
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_SERVICE_NAME: 'gateway-under-test',
        OTEL_METRIC_EXPORT_INTERVAL: '1000',
        // The SDK's own setting: spans are sent 100 ms after they end, not 5 s.
        OTEL_BSP_SCHEDULE_DELAY: '100',
        ALLOWED_SCOPES: JSON.stringify([`/subscriptions/${subscription}`]),
        SLACK_SIGNING_SECRET: slackSecret,
        SLACK_RESPONSE_URL_ORIGINS: JSON.stringify([chatPosts.origin]),
        ACCESS_POLICY: JSON.stringify([
          { callers: ['*'], allow: ['read', 'write', 'secrets', 'admin'] },
          { callers: [`slack:${slackUser.team}/${slackUser.user}`], allow: ['read', 'ApiManagementService_MigrateToStv2'] },
        ]),
      },
      { lroSteps: 4, retryAfterSeconds: 2 },
    );
  });
  afterAll(async () => {
    await plain?.stop();
    await restarted?.stop();
    await gateway.stop();
    await hooks.close();
    await chatPosts.close();
    await collector.close();
  });

  it('shows one start as one trace, from the caller through each poll on two instances to the notification', async () => {
    const traceparent = `00-${callerTraceId}-${callerSpanId}-01`;
    const started = await request(gateway.api(groupPath), {
      method: 'PUT',
      headers: { 'content-type': 'application/json', traceparent, 'x-gateway-notify': hooks.url },
      body: groupBody,
    });
    await started.body.text();
    expect(started.statusCode).toBe(201);
    const id = started.headers['x-orchestration-id'] as string;

    // The incoming span is a child of the caller's; the upstream PUT a child of it.
    const incoming = await until('the incoming span', () =>
      collector.spans.find((span) => span.kind === 2 && span.attributes['gateway.operation'] === operation),
    );
    expect(incoming).toMatchObject({ traceId: callerTraceId, parentSpanId: callerSpanId, name: `PUT ${operation}`, service: 'gateway-under-test' });
    expect(incoming.attributes['http.response.status_code']).toBe(201);
    const upstreamPut = await until('the upstream PUT span', () => collector.spans.find((span) => span.kind === 3 && span.name === 'PUT'));
    expect(upstreamPut).toMatchObject({ traceId: callerTraceId, parentSpanId: incoming.spanId });
    expect(upstreamPut.attributes).toMatchObject({ 'http.request.method': 'PUT', 'http.response.status_code': 201, 'http.request.resend_count': 0 });
    expect(upstreamPut.attributes['url.full']).toContain('api-version=2025-09-01');
    const [received] = gateway.emulator.upstreamRequests({ method: 'PUT' });
    expect(received!.headers.traceparent).toBe(`00-${callerTraceId}-${upstreamPut.spanId}-01`);
    // The upstream's request ids: on the span, in the call log line and in the status document.
    const requestId = upstreamPut.attributes['az.service_request_id'];
    const correlationRequestId = upstreamPut.attributes['gateway.upstream.correlation_request_id'];
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(correlationRequestId).toBe(received!.headers['x-ms-client-request-id']);
    expect(incoming.attributes['az.service_request_id']).toBe(requestId);
    const callLine = gateway.app.callRecords().find((record) => record.operation === operation);
    expect(callLine?.upstreamIds).toEqual({ requestId, correlationRequestId });
    const document = await getJson(gateway.api(`orchestrations/${id}`));
    expect(document.json.upstreamRequestIds).toEqual({ requestId, correlationRequestId });

    // The start's storage calls are spans of its trace.
    const storageSpans = collector.spans.filter((span) => span.traceId === callerTraceId && span.name.startsWith('storage '));
    expect(storageSpans.length).toBeGreaterThanOrEqual(2);
    expect(storageSpans.map((span) => span.attributes['gateway.storage.area'])).toContain('Orchestration storage');
    expect(
      storageSpans.find((span) => span.attributes['gateway.storage.operation'] === 'create an orchestration')?.attributes['http.response.status_code'],
    ).toBe(201);

    // A poll on the first instance, then that instance stops and another carries the operation on.
    const isPoll = (span: ReceivedSpan) => span.name === `poll ${operation}` && span.attributes['gateway.orchestration.id'] === id;
    await until('a poll by the first instance', () => collector.spans.some(isPoll));
    await gateway.app.stop();
    restarted = await startApp(gateway.env);
    gateway.others.push(restarted);
    const delivery = await until('the notification', () => hooks.deliveries[0], 90_000);
    const notify = await until('the notification span', () =>
      collector.spans.find((span) => span.kind === 4 && span.attributes['cloudevents.event_id'] === delivery.event?.id),
    );

    const polls = collector.spans.filter(isPoll);
    expect(new Set(polls.map((span) => span.instance)).size).toBe(2);
    for (const poll of polls) {
      expect(poll.kind).toBe(5);
      expect(poll.links).toEqual([{ traceId: callerTraceId, spanId: incoming.spanId }]);
      // Each poll's upstream read is a child of the poll.
      expect(collector.spans.some((span) => span.parentSpanId === poll.spanId && span.name === 'GET')).toBe(true);
    }
    // The bot saw the notification span's own context, and the start's in the CloudEvent.
    expect(delivery.verified).toBe(true);
    expect(delivery.headers.traceparent).toBe(`00-${notify.traceId}-${notify.spanId}-01`);
    expect(notify.links).toEqual([{ traceId: callerTraceId, spanId: incoming.spanId }]);
    expect(delivery.event?.traceparent).toBe(`00-${callerTraceId}-${incoming.spanId}-01`);
    expect(notify.attributes).toMatchObject({
      'cloudevents.event_type': 'gateway.orchestration.completed',
      'gateway.notification.delivered': true,
      'server.address': '127.0.0.1',
    });
  }, 180_000);

  it('exports the metrics by name and value', async () => {
    const points = collector.points;
    // Every upstream attempt of the operation is counted: the PUT and each poll's read; none retried.
    const gets = gateway.emulator.upstreamRequests({ method: 'GET' }).length;
    await until('the last upstream calls counted', () => latestTotal(points, 'gateway.upstream.calls', { 'gateway.operation': operation }) === gets + 1);
    expect(latestTotal(points, 'gateway.upstream.calls', { 'gateway.operation': operation, 'gateway.retry': 0 })).toBe(gets + 1);
    // All answered 2xx (the create 201, the reads 200).
    expect(latestTotal(points, 'gateway.upstream.calls', { 'gateway.operation': operation, 'http.response.status_class': '2xx' })).toBe(gets + 1);
    expect(latestTotal(points, 'gateway.upstream.calls', { 'http.response.status_class': '5xx' })).toBe(0);
    await until('the notification counted', () => latestTotal(points, 'gateway.notification.attempts') === 1);
    expect(latestTotal(points, 'gateway.notification.failures')).toBe(0);
    await until(
      'the duration recorded',
      () => latestTotal(points, 'gateway.orchestration.duration', { 'gateway.operation': operation, 'gateway.runtime_status': 'Completed' }, 'count') === 1,
    );
    expect(latestTotal(points, 'gateway.orchestration.poll_lag', { 'gateway.operation': operation }, 'count')).toBe(
      collector.spans.filter((span) => span.name === `poll ${operation}`).length,
    );
    // ARM's remaining writes, as its last answer to a write said.
    const writesLeft = points.filter(
      (point) =>
        point.name === 'gateway.upstream.ratelimit.remaining' &&
        point.attributes['gateway.ratelimit.budget'] === 'x-ms-ratelimit-remaining-subscription-writes',
    );
    expect(writesLeft.at(-1)?.value).toBe(gateway.emulator.context.management.remaining.writes);
  }, 60_000);

  it("counts as the callers' refusals only the app's own, by their documented codes; the upstream's 403 and 429 apart, by a bounded code", async () => {
    const points = collector.points;
    const callAs = async (method: 'GET' | 'PUT', path: string, body?: string) => {
      const answer = await request(`${restarted!.url}/api/${path}`, { method, body, headers: body ? { 'content-type': 'application/json' } : {} });
      await answer.body.text();
      return answer.statusCode;
    };
    // The app's own: a start outside ALLOWED_SCOPES, and a second certificate download of an environment within its minute.
    expect(await callAs('PUT', groupPath.replace(subscription, '99999999-0000-0000-0000-000000000000'), groupBody)).toBe(403);
    const download = 'environmentinfo/v1/rsatdownload/project/7/environment/6f1a2b3c-1234-4abc-9def-0123456789ab';
    expect(await callAs('GET', download)).toBe(200);
    expect(await callAs('GET', download)).toBe(429);
    // The upstream's: its authorization failure, a code of its own making, and its throttling (retried, then passed back).
    const madeUpCode = `Minted${randomBytes(29).toString('hex')}`;
    const upstreamAnswers: [number, string, number?][] = [
      [403, 'AuthorizationFailed'],
      [403, madeUpCode],
      [429, 'SubscriptionRequestsThrottled', 4],
    ];
    for (const [status, code, times] of upstreamAnswers) {
      gateway.emulator.script({
        kind: 'answer',
        method: 'GET',
        pathPattern: 'usages$',
        status,
        times,
        headers: { 'retry-after': '0' },
        body: { error: { code, message: 'No.' } },
      });
      expect(await callAs('GET', usagesPath)).toBe(status);
    }
    const usages = 'Location_ListUsage';
    // Two 403s and four 429s (the first three retried) reached the app, and the metrics of the last are out.
    await until(
      'the upstream answers counted',
      () => latestTotal(points, 'gateway.upstream.calls', { 'gateway.operation': usages, 'http.response.status_class': '4xx' }) === 6,
      20_000,
    );
    await until("the callers' refusals counted", () => latestTotal(points, 'gateway.caller.rate_limited', { 'error.type': 'RateLimited' }) === 1, 20_000);
    expect(latestTotal(points, 'gateway.caller.refusals', { 'gateway.operation': operation, 'error.type': 'ScopeNotAllowed' })).toBe(1);
    expect(latestTotal(points, 'gateway.caller.rate_limited', { 'error.type': 'RateLimited' })).toBe(1);
    // Nothing the upstream answered is a caller's refusal.
    expect(latestTotal(points, 'gateway.caller.refusals', { 'gateway.operation': usages })).toBe(0);
    expect(latestTotal(points, 'gateway.caller.rate_limited', { 'gateway.operation': usages })).toBe(0);
    expect(latestTotal(points, 'gateway.upstream.refusals', { 'http.response.status_code': 403, 'error.type': 'AuthorizationFailed' })).toBe(1);
    expect(latestTotal(points, 'gateway.upstream.refusals', { 'http.response.status_code': 403, 'error.type': 'other' })).toBe(1);
    expect(latestTotal(points, 'gateway.upstream.refusals', { 'http.response.status_code': 429, 'error.type': 'SubscriptionRequestsThrottled' })).toBe(1);
    // A code the upstream made up is never an attribute value: it cannot mint series.
    expect(collector.payloads.join('\n')).not.toContain(madeUpCode);
  }, 60_000);

  it('makes a plain read one trace too: its span, the upstream GET under it, the ids on both', async () => {
    // A call that starts nothing hands its trace to its upstream request by hand (no async context).
    const traceId = randomBytes(16).toString('hex');
    // The first instance was stopped mid-operation: the one started after it answers.
    const answer = await request(`${restarted!.url}/api/${usagesPath}`, { headers: { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` } });
    await answer.body.text();
    expect(answer.statusCode).toBe(200);
    const incoming = await until("the read's span", () => collector.spans.find((span) => span.kind === 2 && span.traceId === traceId));
    const attempt = await until('its upstream GET', () => collector.spans.find((span) => span.kind === 3 && span.traceId === traceId));
    expect(incoming.name).toMatch(/^GET /);
    expect(attempt.parentSpanId).toBe(incoming.spanId);
    const received = gateway.emulator.upstreamRequests({ method: 'GET' }).find((sent) => sent.headers.traceparent?.includes(traceId));
    expect(received?.headers.traceparent).toBe(`00-${traceId}-${attempt.spanId}-01`);
    expect(attempt.attributes['az.service_request_id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(incoming.attributes['az.service_request_id']).toBe(attempt.attributes['az.service_request_id']);
  }, 60_000);

  it('traces a chat command as a call: its span, its upstream attempt counted under the operation, its end post a delivery span', async () => {
    const responseToken = randomBytes(8).toString('hex');
    const migration = 'ApiManagementService_MigrateToStv2';
    const form = new URLSearchParams({
      team_id: slackUser.team,
      user_id: slackUser.user,
      command: '/gateway',
      text: `migrate ${subscription}/rg/apim-traced`,
      response_url: `${chatPosts.origin}/commands/${responseToken}`,
    }).toString();
    const answer = await sendChat(restarted!.url, 'slack', form, slackSignedHeaders(slackSecret, form));
    expect(answer.text).toMatch(/^Started operation /);

    const incoming = await until('the chat span', () => collector.spans.find((span) => span.kind === 2 && span.name === 'POST chatops-slack'), 20_000);
    expect(incoming.attributes).toMatchObject({ 'http.route': 'chatops-slack', 'http.response.status_code': 200 });
    const attempt = await until('its upstream POST', () =>
      collector.spans.find((span) => span.kind === 3 && span.traceId === incoming.traceId && String(span.attributes['url.full']).includes('/migrateToStv2')),
    );
    expect(attempt.parentSpanId).toBe(incoming.spanId);
    await until(
      'the attempt counted under its operation',
      () => latestTotal(collector.points, 'gateway.upstream.calls', { 'gateway.operation': migration }) >= 1,
      20_000,
    );
    expect(latestTotal(collector.points, 'gateway.upstream.calls', { 'gateway.operation': 'unknown' })).toBe(0);

    const end = await until('the end posted', () => chatPosts.posts.find((post) => post.path.includes(responseToken)), 90_000);
    const traceparent = String(end.headers.traceparent);
    const notify = await until("the end post's span", () =>
      collector.spans.find((span) => span.kind === 4 && traceparent === `00-${span.traceId}-${span.spanId}-01`),
    );
    expect(notify.name).toBe('notify gateway.orchestration.completed');
    expect(notify.links).toEqual([{ traceId: incoming.traceId, spanId: incoming.spanId }]);
    expect(notify.attributes).toMatchObject({ 'server.address': '127.0.0.1', 'gateway.notification.delivered': true });
    expect(JSON.stringify(notify.attributes)).not.toContain(responseToken);
  }, 120_000);

  it('puts no secret in any exported payload', async () => {
    expect(collector.payloads.length).toBeGreaterThan(0);
    const findings = await scanForSecrets({
      lines: [],
      payloads: collector.payloads,
      connectionString: gateway.azurite.connectionString,
      secrets: [emulatorToken, secret, slackSecret],
      allowedContainers: ['gateway-certificate-secrets'],
    });
    expect(findings).toEqual([]);
    expect(collector.contentTypes.every((type) => type.endsWith('application/json'))).toBe(true);
  });

  it('sends nothing and propagates nothing when no exporter is set', async () => {
    const { OTEL_EXPORTER_OTLP_ENDPOINT: _endpoint, ...withoutExport } = gateway.env;
    plain = await startApp(withoutExport);
    gateway.others.push(plain);
    const traceparent = `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-01`;
    const answer = await request(`${plain.url}/api/${usagesPath}`, { headers: { traceparent } });
    await answer.body.text();
    expect(answer.statusCode).toBe(200);
    const listed = gateway.emulator.upstreamRequests({ method: 'GET', pathIncludes: '/usages' }).at(-1);
    expect(listed).toBeDefined();
    expect(listed!.headers.traceparent).toBeUndefined();
    await plain.stop();
    // The exporting instance still sends its metrics; nothing of this call reached the collector.
    expect(collector.spans.filter((span) => span.traceId === traceparent.split('-')[1])).toEqual([]);
  }, 60_000);
});
