/** OpenTelemetry traces and metrics: hooks that cost nothing until an exporter is set. */
export {
  callTraceOf,
  cloudEventTracing,
  currentTraceCarrier,
  inCallTrace,
  inOperation,
  recordCertificateExpiry,
  recordOrchestrationEnd,
  recordUpstreamIdsOnCall,
  traceIncoming,
  traceNotification,
  tracePoll,
  traceStorage,
  traceUpstreamAttempt,
} from './hooks';
export type { CallTrace } from './hooks';
export { flushSpans, pauseTelemetry, startTelemetry, stopTelemetry, watchUpstreamBudget } from './telemetry';
export type { TraceCarrier } from './traceCarrier';
export { upstreamIdsOf } from './upstreamIds';
export type { UpstreamIds } from './upstreamIds';
