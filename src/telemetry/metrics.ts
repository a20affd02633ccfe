/**
 * The app's metrics. Instruments are made when export starts (startMetrics), after the SDK
 * registered its meter provider: the API hands out no-op meters before that, and they stay
 * no-op. Part of the SDK's file, called through src/telemetry/hooks.ts.
 */
import type { HttpResponseInit } from '@azure/functions';
import { metrics, ValueType, type Attributes, type Counter, type Histogram } from '@opentelemetry/api';
import { LRUCache } from 'lru-cache';
import { errorCodeOf, ownErrorCode, type WithOwnErrorCode } from '../rules';

interface Instruments {
  upstreamThrottled: Counter;
  callerRefusals: Counter;
  callerRateLimited: Counter;
  upstreamRefusals: Counter;
  orchestrationDuration: Histogram;
  pollLag: Histogram;
  notificationAttempts: Counter;
  notificationFailures: Counter;
}

/** The management service's remaining budgets as the app last saw them, each named by the header that told it (src/upstream/upstreamBudget.ts). */
export type UpstreamBudgetReader = () => { header: string; remaining: number }[];
let readUpstreamBudget: UpstreamBudgetReader = () => [];

/**
 * Makes the instruments, once the SDK's meter provider is registered; `reader` is where the
 * remaining-budget gauge reads: the app parses each answer's budget headers once, for its
 * health report too.
 */
export function startMetrics(reader: UpstreamBudgetReader | undefined): void {
  if (reader) readUpstreamBudget = reader;
  instruments();
}

/**
 * Upstream attempts, counted here and read as a cumulative counter: adding to an SDK counter
 * hashes its attributes (sorted, serialized) on every call, and so would a key made of them.
 * By operation (the same string on every call, whose hash V8 keeps), then by status class and
 * retry number as one index. As many entries as the counter would have series.
 */
const upstreamCallCounts = new Map<string, UpstreamCallCount[]>();
interface UpstreamCallCount {
  attributes: Attributes;
  count: number;
}
/** By the status's hundreds (1xx to 5xx; none is below 100), then any other status, then no answer at all. */
const statusClasses = ['', '1xx', '2xx', '3xx', '4xx', '5xx', 'other', 'error'];
/** Most environments the expiry gauge reports (the refresh route names any): past it, the least recently refreshed goes. */
const maxCertificateEnvironments = 1000;
const certificateExpiry = new LRUCache<string, { projectId: number; environmentId: string; expiresAtMs: number }>({ max: maxCertificateEnvironments });
const dayMs = 24 * 3600_000;

/**
 * At most `limit` distinct values of an attribute, the first seen; any later one (or one longer
 * than 128 characters) is exported as `other`, so no input (a stored document, an upstream's
 * answer) can make series without bound.
 */
function bounded(limit: number): (value: string) => string {
  const seen = new Set<string>();
  return (value) => {
    if (seen.has(value)) return value;
    if (seen.size >= limit || value.length > 128) return 'other';
    seen.add(value);
    return value;
  };
}
/** The catalogue's operations and the app's routes are fewer than a hundred. */
const operationValue = bounded(256);
const runtimeStatusValue = bounded(16);

/** The app's own refusals, by status: the only values `error.type` takes on the callers' counters. */
const ownRefusalCodes: Readonly<Record<number, readonly string[]>> = {
  403: ['OperationNotAllowed', 'ScopeNotAllowed'],
  429: ['CallerRateLimited', 'TooManyWaits', 'RateLimited'],
};
/** The management service's codes of a 403 or 429 told apart on `gateway.upstream.refusals`; any other is `other`. */
const upstreamRefusalCodes: ReadonlySet<string> = new Set([
  'AuthorizationFailed',
  'LinkedAuthorizationFailed',
  'RequestDisallowedByPolicy',
  'ReadOnlyDisabledSubscription',
  'TooManyRequests',
  'SubscriptionRequestsThrottled',
  'TenantRequestsThrottled',
  'ResourceRequestsThrottled',
  'ResourceCollectionRequestsThrottled',
]);

let made: Instruments | undefined;

function instruments(): Instruments {
  if (made) return made;
  const meter = metrics.getMeter('management-gateway');
  meter
    .createObservableGauge('gateway.upstream.ratelimit.remaining', {
      description: "Requests left in the management service's throttling window (x-ms-ratelimit-remaining-*), as last answered",
      valueType: ValueType.INT,
    })
    .addCallback((result) => {
      for (const { header, remaining } of readUpstreamBudget()) result.observe(remaining, { 'gateway.ratelimit.budget': header });
    });
  meter
    .createObservableGauge('gateway.certificate.days_to_expiry', { description: 'Days until the stored certificate of an environment expires', unit: 'd' })
    .addCallback((result) => {
      for (const entry of certificateExpiry.values()) {
        result.observe(Math.floor((entry.expiresAtMs - Date.now()) / dayMs), {
          'gateway.certificate.project_id': entry.projectId,
          'gateway.certificate.environment_id': entry.environmentId,
        });
      }
    });
  meter
    .createObservableCounter('gateway.upstream.calls', { description: 'Upstream attempts, by operation, status class and retry number' })
    .addCallback((result) => {
      for (const counts of upstreamCallCounts.values()) for (const entry of counts) if (entry) result.observe(entry.count, entry.attributes);
    });
  made = {
    upstreamThrottled: meter.createCounter('gateway.upstream.throttled', { description: 'Upstream answers 429 (the management service throttling the app)' }),
    callerRefusals: meter.createCounter('gateway.caller.refusals', {
      description: 'Calls the app refused by the caller rights or ALLOWED_SCOPES (403), by code',
    }),
    callerRateLimited: meter.createCounter('gateway.caller.rate_limited', { description: "Calls answered 429 by the app's own limits, by code" }),
    upstreamRefusals: meter.createCounter('gateway.upstream.refusals', {
      description: "The upstream's own 403 and 429 answers passed back to callers, by status and code",
    }),
    orchestrationDuration: meter.createHistogram('gateway.orchestration.duration', { description: 'Time from a long-running start to its end', unit: 's' }),
    pollLag: meter.createHistogram('gateway.orchestration.poll_lag', { description: 'Time from when a poll was due to when it was made', unit: 'ms' }),
    notificationAttempts: meter.createCounter('gateway.notification.attempts', { description: 'Notification delivery attempts' }),
    notificationFailures: meter.createCounter('gateway.notification.failures', { description: 'Notification delivery attempts that did not deliver' }),
  };
  return made;
}

/** The index in statusClasses of an answer's status (undefined: no answer). */
function statusClassIndexOf(status: number | undefined): number {
  if (status === undefined) return 7;
  return status >= 100 && status < 600 ? Math.floor(status / 100) : 6;
}

/** One upstream attempt; `status` undefined when it got no answer (timeout, connection). */
export function recordUpstreamAttempt(operation: string, attempt: number, status: number | undefined): void {
  const classIndex = statusClassIndexOf(status);
  const index = attempt * statusClasses.length + classIndex;
  const name = operationValue(operation);
  let counts = upstreamCallCounts.get(name);
  if (!counts) upstreamCallCounts.set(name, (counts = []));
  const counted = counts[index];
  if (counted) counted.count += 1;
  else
    counts[index] = { attributes: { 'gateway.operation': name, 'http.response.status_class': statusClasses[classIndex]!, 'gateway.retry': attempt }, count: 1 };
  if (status === 429) instruments().upstreamThrottled.add(1, { 'gateway.operation': name });
}

/**
 * A 403 or 429 a caller was answered: the app's own refusal (marked by errorResponse) on the
 * callers' counters by its documented code; the upstream's passed back on its own, by a code
 * from a fixed list.
 */
export function recordRefusal(operation: string, response: HttpResponseInit & WithOwnErrorCode): void {
  const status = response.status ?? 200;
  const own = response[ownErrorCode];
  const { callerRefusals, callerRateLimited, upstreamRefusals } = instruments();
  if (own === undefined) {
    const code = errorCodeOf(response);
    upstreamRefusals.add(1, {
      'gateway.operation': operationValue(operation),
      'http.response.status_code': status,
      'error.type': code !== undefined && upstreamRefusalCodes.has(code) ? code : 'other',
    });
  } else if (ownRefusalCodes[status]?.includes(own)) {
    (status === 429 ? callerRateLimited : callerRefusals).add(1, { 'gateway.operation': operationValue(operation), 'error.type': own });
  }
}

/** A long-running operation that ended: its duration from the start. */
export function recordOrchestrationEnd(state: { name: string; runtimeStatus: string; createdTime: string; endedTime?: string }): void {
  if (!state.endedTime) return;
  const seconds = (Date.parse(state.endedTime) - Date.parse(state.createdTime)) / 1000;
  instruments().orchestrationDuration.record(seconds, {
    'gateway.operation': operationValue(state.name),
    'gateway.runtime_status': runtimeStatusValue(state.runtimeStatus),
  });
}

/** A poll made `lagMs` after it was due. */
export function recordPollLag(operation: string, lagMs: number): void {
  instruments().pollLag.record(Math.max(0, lagMs), { 'gateway.operation': operationValue(operation) });
}

export function recordNotificationAttempt(delivered: boolean): void {
  const { notificationAttempts, notificationFailures } = instruments();
  notificationAttempts.add(1);
  if (!delivered) notificationFailures.add(1);
}

/** The expiry of an environment's stored certificate, as last seen (the gauge counts days from now). */
export function recordCertificateExpiry(environment: { projectId: number; environmentId: string }, expiresAt: string | undefined): void {
  if (!expiresAt) return;
  instruments();
  const key = `${environment.projectId}/${environment.environmentId}`;
  certificateExpiry.set(key, { ...environment, expiresAtMs: Date.parse(expiresAt) });
}
