/**
 * The exporting side on its own, in process, over the default protocol (`http/protobuf`) to the
 * test collector: sampling (a ratio of 0 drops a new trace, yet a caller's sampled trace is
 * followed and a span ending in error is kept), the callers' refusal and rate-limit counters
 * apart from the upstream's refusals passed back, the certificate expiry gauge. Run on the
 * built bundle: `npm run build` first.
 */
import { randomBytes } from 'node:crypto';
import { runExportScenario } from '../helpers/exportScenario';
import { latestTotal, startOtlpReceiver, type OtlpReceiver } from '../helpers/otlpReceiver';

const refusal = (status: number, code: string) => ({ status, body: JSON.stringify({ error: { code, message: 'refused' } }) });

let collector: OtlpReceiver;
const callerTrace = randomBytes(16).toString('hex');
const handedTrace = randomBytes(16).toString('hex');
beforeAll(async () => {
  collector = await startOtlpReceiver();
  const answers = {
    ok: { status: 200 },
    failed: refusal(500, 'InternalError'),
    notAllowed: refusal(403, 'OperationNotAllowed'),
    outOfScope: refusal(403, 'ScopeNotAllowed'),
    limited: refusal(429, 'CallerRateLimited'),
    throttledUpstream: refusal(429, 'SubscriptionRequestsThrottled'),
    forbiddenUpstream: refusal(403, 'x'.repeat(64)),
  };
  await runExportScenario(
    { otlp: { protocol: 'http/protobuf' }, serviceName: 'export-test', serviceVersion: '0.0.0', samplingRatio: 0, metricIntervalMs: 60_000 },
    `const answers = ${JSON.stringify(answers)};
    // The app's own error answers carry their code under a registered symbol (src/rules/errorCodes.ts); the upstream's do not.
    for (const name of ['notAllowed', 'outOfScope', 'limited']) answers[name][Symbol.for('management-gateway.ownErrorCode')] = JSON.parse(answers[name].body).error.code;
    await call('dropped', answers.ok);
    await call('failed', answers.failed);
    await call('followed', answers.ok, '00-${callerTrace}-00f067aa0ba902b7-01');
    // A handler given its trace by hand: it runs outside any async context (it answers 500 if
    // not), hands the trace to its upstream attempt, and enters it only for work that must.
    const { instrumentation } = running;
    await instrumentation.traceIncoming('handed', async (request, invocation) => {
      const handed = instrumentation.callTraceOf(invocation);
      const outside = instrumentation.currentTraceCarrier();
      const within = await instrumentation.inCallTrace(handed, async () => instrumentation.currentTraceCarrier());
      await instrumentation.traceUpstreamAttempt({ method: 'GET', origin: 'https://upstream.example', path: '/handed?api-version=1', attempt: 0, waitedMs: 0, callTrace: handed }, {}, async () => ({ status: 200, headers: {} }));
      const enteredOnlyWithin = outside === undefined && within?.traceparent.startsWith('00-${handedTrace}-') && !within.traceparent.includes('00f067aa0ba902b7');
      return { status: enteredOnlyWithin ? 200 : 500 };
    }, { passTrace: true })({ method: 'GET', url: 'http://127.0.0.1/api/handed', headers: new Headers() }, { traceContext: { traceParent: '00-${handedTrace}-00f067aa0ba902b7-01' } });
    await call('refused', answers.notAllowed);
    await call('refused', answers.outOfScope);
    await call('limited', answers.limited);
    await call('passedBack', answers.throttledUpstream);
    await call('passedBack', answers.forbiddenUpstream);
    // A handler that throws, and within it an upstream attempt that gets no answer: both spans are
    // errors, so both are kept at ratio 0, and the attempt is counted as one without an answer.
    await running.instrumentation.traceIncoming('thrown', () => running.instrumentation.traceUpstreamAttempt(
      { method: 'GET', origin: 'https://upstream.example', path: '/things?api-version=1', attempt: 1, waitedMs: 250 },
      {},
      () => Promise.reject(Object.assign(new Error('reset'), { code: 'ECONNRESET' })),
    ))({ method: 'GET', url: 'http://127.0.0.1/api/thrown', headers: new Headers() }, {}).catch(() => undefined);
    running.instrumentation.recordCertificateExpiry({ projectId: 7, environmentId: 'env-a' }, new Date(Date.now() + 10.5 * 24 * 3600000).toISOString());`,
    { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url },
  );
}, 90_000);
afterAll(async () => {
  await collector.close();
});

describe('exporting over http/protobuf', () => {
  it('sends protobuf, which the collector reads', () => {
    expect(collector.contentTypes).toEqual(expect.arrayContaining(['/v1/traces application/x-protobuf', '/v1/metrics application/x-protobuf']));
    expect(collector.spans.every((span) => span.service === 'export-test')).toBe(true);
  });

  it('drops a new trace at ratio 0, follows a caller’s sampled one, and keeps a span that ended in error', () => {
    const names = collector.spans.map((span) => span.name);
    expect(names).not.toContain('GET dropped');
    expect(collector.spans.find((span) => span.name === 'GET followed')?.traceId).toBe(callerTrace);
    expect(collector.spans.find((span) => span.name === 'GET failed')).toMatchObject({ status: { code: 2 }, attributes: { 'http.response.status_code': 500 } });
  });

  it("hands a call's trace to its upstream attempt without entering the async context", () => {
    const incoming = collector.spans.find((span) => span.name === 'GET handed');
    const attempt = collector.spans.find((span) => span.attributes['url.full'] === 'https://upstream.example/handed?api-version=1');
    expect(incoming).toMatchObject({ traceId: handedTrace, attributes: { 'http.response.status_code': 200 } });
    expect(attempt).toMatchObject({ traceId: handedTrace, parentSpanId: incoming?.spanId });
  });

  it('keeps the spans of a handler that threw and of an attempt that got no answer, marked failed', () => {
    const incoming = collector.spans.find((span) => span.name === 'GET thrown');
    const attempt = collector.spans.find((span) => span.name === 'GET' && span.attributes['url.full'] === 'https://upstream.example/things?api-version=1');
    expect(incoming).toMatchObject({ status: { code: 2 } });
    expect(attempt).toMatchObject({ status: { code: 2 }, attributes: { 'http.request.resend_count': 1, 'gateway.retry.waited_ms': 250 } });
    expect(attempt?.traceId).toBe(incoming?.traceId);
    expect(
      latestTotal(collector.points, 'gateway.upstream.calls', { 'gateway.operation': 'thrown', 'http.response.status_class': 'error', 'gateway.retry': 1 }),
    ).toBe(1);
  });

  it('counts the refusals and rate-limit answers by code', () => {
    expect(latestTotal(collector.points, 'gateway.caller.refusals', { 'gateway.operation': 'refused' })).toBe(2);
    expect(latestTotal(collector.points, 'gateway.caller.refusals', { 'error.type': 'ScopeNotAllowed' })).toBe(1);
    expect(latestTotal(collector.points, 'gateway.caller.rate_limited', { 'gateway.operation': 'limited', 'error.type': 'CallerRateLimited' })).toBe(1);
  });

  it("counts the upstream's 403 and 429 passed back apart, by a code from a fixed list or other", () => {
    expect(latestTotal(collector.points, 'gateway.caller.refusals', { 'gateway.operation': 'passedBack' })).toBe(0);
    expect(latestTotal(collector.points, 'gateway.caller.rate_limited', { 'gateway.operation': 'passedBack' })).toBe(0);
    expect(
      latestTotal(collector.points, 'gateway.upstream.refusals', {
        'gateway.operation': 'passedBack',
        'http.response.status_code': 429,
        'error.type': 'SubscriptionRequestsThrottled',
      }),
    ).toBe(1);
    expect(
      latestTotal(collector.points, 'gateway.upstream.refusals', {
        'gateway.operation': 'passedBack',
        'http.response.status_code': 403,
        'error.type': 'other',
      }),
    ).toBe(1);
  });

  it('gives the days to a certificate’s expiry per environment', () => {
    expect(
      latestTotal(collector.points, 'gateway.certificate.days_to_expiry', {
        'gateway.certificate.project_id': 7,
        'gateway.certificate.environment_id': 'env-a',
      }),
    ).toBe(10);
  });

  it('never exports the query of a call (a function key may be in it)', () => {
    expect(collector.payloads.join('\n')).not.toContain('CANARY-SECRET');
  });
});
