/**
 * Liveness with dependency checks: the app's version, and whether storage and each upstream
 * answer. An upstream "answers" when it returns any HTTP status; only silence counts as down.
 * With certificate environments configured, also which are running out (certificateWatch):
 * one within `CERT_ALERT_DAYS` makes the report Degraded.
 *
 * `health` is anonymous, so a probe must cost the app next to nothing whoever calls it how
 * often: concurrent callers share one probe, a finished probe is kept for a few seconds
 * (`HEALTH_CACHE_SECONDS`), and each check has a short budget (`HEALTH_PROBE_TIMEOUT_MS`)
 * with no retry, on a connection pool of its own, so probes never queue ahead of real calls.
 */
import type { CertificateWatchReport } from './certificates';
import { tokenWaits } from './identity';

export type DependencyName = 'storage' | 'management' | 'lifecycle';

export interface DependencyStatus {
  ok: boolean;
  detail: string;
  durationMs: number;
}

export interface HealthReport {
  status: 'Healthy' | 'Degraded';
  version: string;
  checkedAt: string;
  dependencies: Record<DependencyName, DependencyStatus>;
  certificates?: CertificateWatchReport;
  /** The management service's last remaining-request counts (x-ms-ratelimit-remaining-*). */
  upstreamBudget?: Record<string, { remaining: number; seenAt: string }>;
}

/**
 * The detail of an upstream that answered the anonymous probe. The probe sends no token, so an
 * upstream that is up answers it 401 or 403: that reads as what it means, not as a failure.
 */
export function upstreamProbeDetail(status: number): string {
  const meaning = status === 401 || status === 403 ? ': the expected answer, as the probe sends no token; calls carry one' : '';
  return `reachable (HTTP ${status} to an anonymous probe${meaning})`;
}

/** One check per dependency: resolves with a short detail, or throws when it does not answer. */
export type HealthChecks = Record<DependencyName, () => Promise<string>>;

export interface HealthMonitorOptions {
  checks: HealthChecks;
  /** The certificate watch, inside the same shared and cached probe; bounded by its own storage budget. */
  certificates?: () => Promise<CertificateWatchReport>;
  upstreamBudget?: () => Record<string, { remaining: number; seenAt: string }>;
  version: string;
  /** How long a finished report is answered again without probing. */
  cacheMs: number;
  now: () => number;
}

async function timed(check: () => Promise<string>, now: () => number): Promise<DependencyStatus> {
  const started = now();
  try {
    const detail = await check();
    return { ok: true, detail, durationMs: now() - started };
  } catch (error) {
    const code = (error as { code?: string }).code ?? (error as Error).name ?? 'error';
    // A dependency reached with an identity may be waiting on its token, not on itself: say so.
    const waits = tokenWaits().map((wait) => `a token for ${wait.usedFor} asked ${Math.round((now() - wait.sinceMs) / 100) / 10} s ago has no answer yet`);
    return { ok: false, detail: waits.length > 0 ? `${code}; ${waits.join('; ')}` : code, durationMs: now() - started };
  }
}

export class HealthMonitor {
  #inFlight: Promise<HealthReport> | undefined;
  #last: { report: HealthReport; at: number } | undefined;

  constructor(private readonly options: HealthMonitorOptions) {}

  /** The latest report: cached, shared with a probe already running, or probed now. */
  report(): Promise<HealthReport> {
    const { now, cacheMs } = this.options;
    if (this.#last && now() - this.#last.at < cacheMs) return Promise.resolve(this.#last.report);
    this.#inFlight ??= this.#probe().finally(() => {
      this.#inFlight = undefined;
    });
    return this.#inFlight;
  }

  async #probe(): Promise<HealthReport> {
    const { checks, certificates, now, version } = this.options;
    const [storage, management, lifecycle, certificateReport] = await Promise.all([
      timed(checks.storage, now),
      timed(checks.management, now),
      timed(checks.lifecycle, now),
      certificates?.(),
    ]);
    const dependencies = { storage, management, lifecycle };
    const certificatesOk = !certificateReport || (!certificateReport.error && certificateReport.atRisk.every((entry) => !entry.alert));
    const report: HealthReport = {
      status: Object.values(dependencies).every((dependency) => dependency.ok) && certificatesOk ? 'Healthy' : 'Degraded',
      version,
      checkedAt: new Date(now()).toISOString(),
      dependencies,
      ...(certificateReport && { certificates: certificateReport }),
      ...(this.options.upstreamBudget && { upstreamBudget: this.options.upstreamBudget() }),
    };
    this.#last = { report, at: now() };
    return report;
  }
}
