/**
 * The app's metrics. Instruments are made on first use, after the SDK registered its meter
 * provider (the API hands out no-op meters before that, and they stay no-op). Part of the
 * SDK's file, called through src/telemetry/hooks.ts.
 */
import type { HttpResponseInit } from '@azure/functions';
import { metrics, ValueType, type Attributes, type Counter, type Histogram } from '@opentelemetry/api';
import { errorCodeOf } from '../http/callLog';
import { budgetHeaders, remainingCountOf, type BudgetName } from '../upstream/upstreamBudget';

interface Instruments {
  upstreamThrottled: Counter;
  callerRefusals: Counter;
  callerRateLimited: Counter;
  orchestrationDuration: Histogram;
  pollLag: Histogram;
  notificationAttempts: Counter;
  notificationFailures: Counter;
}

/** What observable instruments read when the reader collects. */
const lastRemaining = new Map<BudgetName, number>();
const budgetNames = Object.keys(budgetHeaders) as BudgetName[];
/**
 * Upstream attempts, counted here by attribute set and read as a cumulative counter: adding to
 * an SDK counter hashes its attributes (sorted, serialized) on every call, the attempt's
 * dearest metric step. As many entries as the counter would have series.
 */
const upstreamCallCounts = new Map<string, { attributes: Attributes; count: number }>();
/** The header of each budget, looked up once rather than by name on every answer. */
const budgetHeaderOf = budgetNames.map((name) => [name, budgetHeaders[name]] as const);
const certificateExpiry = new Map<string, { projectId: number; environmentId: string; expiresAtMs: number }>();
const dayMs = 24 * 3600_000;

let made: Instruments | undefined;

function instruments(): Instruments {
  if (made) return made;
  const meter = metrics.getMeter('management-gateway');
  meter
    .createObservableGauge('gateway.upstream.ratelimit.remaining', { description: "Requests left in the management service's throttling window (x-ms-ratelimit-remaining-*), as last answered", valueType: ValueType.INT })
    .addCallback((result) => {
      for (const [name, value] of lastRemaining) result.observe(value, { 'gateway.ratelimit.budget': budgetHeaders[name] });
    });
  meter
    .createObservableGauge('gateway.certificate.days_to_expiry', { description: 'Days until the stored certificate of an environment expires', unit: 'd' })
    .addCallback((result) => {
      for (const entry of certificateExpiry.values()) {
        result.observe(Math.floor((entry.expiresAtMs - Date.now()) / dayMs), { 'gateway.certificate.project_id': entry.projectId, 'gateway.certificate.environment_id': entry.environmentId });
      }
    });
  meter
    .createObservableCounter('gateway.upstream.calls', { description: 'Upstream attempts, by operation, status class and retry number' })
    .addCallback((result) => {
      for (const entry of upstreamCallCounts.values()) result.observe(entry.count, entry.attributes);
    });
  made = {
    upstreamThrottled: meter.createCounter('gateway.upstream.throttled', { description: 'Upstream answers 429 (the management service throttling the app)' }),
    callerRefusals: meter.createCounter('gateway.caller.refusals', { description: 'Calls refused by the caller rights (403), by code' }),
    callerRateLimited: meter.createCounter('gateway.caller.rate_limited', { description: "Calls answered 429 by the app's own limits, by code" }),
    orchestrationDuration: meter.createHistogram('gateway.orchestration.duration', { description: 'Time from a long-running start to its end', unit: 's' }),
    pollLag: meter.createHistogram('gateway.orchestration.poll_lag', { description: 'Time from when a poll was due to when it was made', unit: 'ms' }),
    notificationAttempts: meter.createCounter('gateway.notification.attempts', { description: 'Notification delivery attempts' }),
    notificationFailures: meter.createCounter('gateway.notification.failures', { description: 'Notification delivery attempts that did not deliver' }),
  };
  return made;
}

function statusClassOf(status: number | undefined): string {
  return status === undefined ? 'error' : `${Math.floor(status / 100)}xx`;
}

/** One upstream attempt; `answer` undefined when it got no answer (timeout, connection). */
export function recordUpstreamAttempt(operation: string, attempt: number, answer: { status: number; headers: Record<string, string> } | undefined): void {
  const { upstreamThrottled } = instruments();
  const statusClass = statusClassOf(answer?.status);
  const key = `${operation}\n${statusClass}\n${attempt}`;
  const counted = upstreamCallCounts.get(key);
  if (counted) counted.count += 1;
  else upstreamCallCounts.set(key, { attributes: { 'gateway.operation': operation, 'http.response.status_class': statusClass, 'gateway.retry': attempt }, count: 1 });
  if (!answer) return;
  if (answer.status === 429) upstreamThrottled.add(1, { 'gateway.operation': operation });
  for (const [name, header] of budgetHeaderOf) {
    const text = answer.headers[header];
    if (text === undefined) continue;
    const count = remainingCountOf(text);
    if (count !== undefined) lastRemaining.set(name, count);
  }
}

/** A 403 or 429 the app answered a caller. */
export function recordCallerRefusal(operation: string, response: HttpResponseInit): void {
  const code = errorCodeOf(response) ?? 'unknown';
  const { callerRefusals, callerRateLimited } = instruments();
  (response.status === 429 ? callerRateLimited : callerRefusals).add(1, { 'gateway.operation': operation, 'error.type': code });
}

/** A long-running operation that ended: its duration from the start. */
export function recordOrchestrationEnd(state: { name: string; runtimeStatus: string; createdTime: string; endedTime?: string }): void {
  if (!state.endedTime) return;
  const seconds = (Date.parse(state.endedTime) - Date.parse(state.createdTime)) / 1000;
  instruments().orchestrationDuration.record(seconds, { 'gateway.operation': state.name, 'gateway.runtime_status': state.runtimeStatus });
}

/** A poll made `lagMs` after it was due. */
export function recordPollLag(operation: string, lagMs: number): void {
  instruments().pollLag.record(Math.max(0, lagMs), { 'gateway.operation': operation });
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
  certificateExpiry.set(`${environment.projectId}/${environment.environmentId}`, { ...environment, expiresAtMs: Date.parse(expiresAt) });
}
