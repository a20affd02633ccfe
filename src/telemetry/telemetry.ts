/**
 * Whether this process exports telemetry, and starting it. The OpenTelemetry API, SDK and
 * exporters, and the app's spans and metrics, are one file loaded when
 * `OTEL_EXPORTER_OTLP_ENDPOINT` or `APPLICATIONINSIGHTS_CONNECTION_STRING` is set
 * (src/telemetry/exportSdk.ts); every hook (src/telemetry/hooks.ts) returns at once when neither
 * is, so a process without an exporter neither loads nor runs any of it.
 */
import { ConfigError, getConfig, type Config } from '../settings';
import { managedIdentityOnFirstUse } from '../identity';
import { telemetrySdkPackage } from './sdkOnFirstUse';
import { appVersion } from '../version';
import type { Instrumentation, RunningExport } from './exportSdk';
import type { UpstreamBudgetReader } from './metrics';

let running: RunningExport | undefined;
let paused = false;
let upstreamBudget: UpstreamBudgetReader = () => [];

/** Where the remaining-budget gauge reads (the app's own record of the management service's answers). */
export function watchUpstreamBudget(reader: UpstreamBudgetReader): void {
  upstreamBudget = reader;
}

/** The spans and metrics, once an exporter is set up; undefined when nothing is exported (or paused). */
export function instrumentation(): Instrumentation | undefined {
  return paused ? undefined : running?.instrumentation;
}

/**
 * Calls made while paused are neither traced nor measured, as if nothing were exported; what
 * was buffered is still sent. For the bench, which alternates rounds of calls with and without
 * telemetry in one process: rounds in separate processes differ by more than what is measured.
 */
export function pauseTelemetry(pause: boolean): void {
  if (!running || pause === paused) return;
  paused = pause;
  if (pause) running.releaseContext();
  else running.takeContext();
}

/** The settings of the exporters, or undefined when none is configured. */
export function exportSettingsOf(config: Config) {
  const { OTEL_EXPORTER_OTLP_ENDPOINT, APPLICATIONINSIGHTS_CONNECTION_STRING } = config;
  if (!OTEL_EXPORTER_OTLP_ENDPOINT && !APPLICATIONINSIGHTS_CONNECTION_STRING) return undefined;
  return {
    otlp: OTEL_EXPORTER_OTLP_ENDPOINT ? { protocol: config.OTEL_EXPORTER_OTLP_PROTOCOL } : undefined,
    applicationInsights: APPLICATIONINSIGHTS_CONNECTION_STRING
      ? {
          connectionString: APPLICATIONINSIGHTS_CONNECTION_STRING,
          ...(config.APPLICATIONINSIGHTS_AUTHENTICATION_STRING && {
            credential: managedIdentityOnFirstUse(config.APPLICATIONINSIGHTS_AUTHENTICATION_STRING, config.TOKEN_TIMEOUT_MS, 'the telemetry exporter'),
          }),
        }
      : undefined,
    serviceName: config.OTEL_SERVICE_NAME,
    serviceVersion: appVersion,
    samplingRatio: config.TELEMETRY_SAMPLING_RATIO,
    metricIntervalMs: config.OTEL_METRIC_EXPORT_INTERVAL,
    // Read through this module: the app's services may be made again after export starts.
    upstreamBudget: () => upstreamBudget(),
  };
}

/**
 * Starts exporting when the settings ask for it; called once when the app is loaded. The
 * environment is looked at first, so a process without an exporter does not even parse the
 * settings here. Invalid settings start nothing: the first call answers with their problems.
 */
export function startTelemetry(env: Record<string, string | undefined> = process.env): void {
  if (running || (!env.OTEL_EXPORTER_OTLP_ENDPOINT && !env.APPLICATIONINSIGHTS_CONNECTION_STRING)) return;
  let config: Config;
  try {
    config = getConfig();
  } catch (error) {
    if (error instanceof ConfigError) return;
    throw error;
  }
  const settings = exportSettingsOf(config);
  if (settings) running = telemetrySdkPackage().startExport(settings);
}

/** Sends the spans buffered so far; nothing to do when nothing is exported. */
export async function flushSpans(): Promise<void> {
  await running?.flushSpans();
}

/** Sends what is buffered and stops exporting; nothing to do when nothing is exported. */
export async function stopTelemetry(): Promise<void> {
  const stopping = running;
  running = undefined;
  paused = false;
  await stopping?.shutdown();
}
