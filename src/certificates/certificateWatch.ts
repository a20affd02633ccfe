/**
 * Which environments are running out of certificate: those whose current
 * certificate expires within `CERT_RENEW_BEFORE_DAYS`, or that have none, and whose last attempt
 * to get one did not succeed. Within `CERT_ALERT_DAYS` (or with none at all) it is an alert:
 * `health` turns Degraded. The refresher warns of each such environment every run, and `health`
 * lists them. Only codes and dates: never a message, a secret or a password.
 */
import { mapConcurrently } from '../concurrency';
import { GatewayError } from '../errors';
import { StorageBudget } from '../storage';
import type { CertificateEnvironment } from '../settings';
import type { AttemptRecord, CertificateStore, EnvironmentRecord } from './certificateStore';

export interface WatchPolicy {
  /** `CERT_RENEW_BEFORE_DAYS`: from then on a certificate should have been renewed. */
  renewBeforeMs: number;
  /** `CERT_ALERT_DAYS`: from then on it is an alert. */
  alertBeforeMs: number;
}

export interface EnvironmentAtRisk extends CertificateEnvironment {
  /** The current certificate's notAfter; null when there is none. */
  expiresAt: string | null;
  /** Whole days until then (negative once expired); null when there is none. */
  daysLeft: number | null;
  /** The last attempt's code: a refusal such as `PfxPasswordInvalid`, or `RateLimited`. */
  lastErrorCode: string;
  alert: boolean;
}

export interface CertificateWatchReport {
  /** Configured environments looked at. */
  environments: number;
  atRisk: EnvironmentAtRisk[];
  /** Set when the records could not be read in time: the list is then unknown, not empty. */
  error?: string;
}

const day = 24 * 3600_000;

/**
 * The code of an attempt that did not give a certificate: a failure, or a refresh the rate limit
 * held back (a 429 storm must not hide a certificate running out). Undefined for success.
 */
function unsuccessfulCode(attempt: AttemptRecord | undefined): string | undefined {
  if (attempt?.outcome === 'failed') return attempt.error?.code ?? 'Failed';
  if (attempt?.outcome === 'rate-limited') return 'RateLimited';
  return undefined;
}

export function environmentAtRisk(
  environment: CertificateEnvironment,
  record: Pick<EnvironmentRecord, 'current' | 'lastAttempt'>,
  now: number,
  policy: WatchPolicy,
): EnvironmentAtRisk | undefined {
  const lastErrorCode = unsuccessfulCode(record.lastAttempt);
  if (!lastErrorCode) return undefined;
  const { projectId, environmentId } = environment;
  if (!record.current) return { projectId, environmentId, expiresAt: null, daysLeft: null, lastErrorCode, alert: true };
  const msLeft = Date.parse(record.current.expiresAt) - now;
  if (msLeft > policy.renewBeforeMs) return undefined;
  return {
    projectId,
    environmentId,
    expiresAt: record.current.expiresAt,
    daysLeft: Math.floor(msLeft / day),
    lastErrorCode,
    alert: msLeft <= policy.alertBeforeMs,
  };
}

export interface CertificateWatchDependencies {
  store: CertificateStore;
  environments: readonly CertificateEnvironment[];
  policy: WatchPolicy;
  /** The health probe's budget (`HEALTH_PROBE_TIMEOUT_MS`): the whole look, all records together. */
  timeoutMs: number;
  concurrency: number;
  now: () => number;
}

/** The look `health` takes at every configured environment, within one storage budget. */
export class CertificateWatch {
  readonly #budget: StorageBudget;

  constructor(private readonly deps: CertificateWatchDependencies) {
    this.#budget = new StorageBudget(deps.timeoutMs, 'The certificate watch');
  }

  async report(): Promise<CertificateWatchReport> {
    const { store, environments, policy, concurrency, now } = this.deps;
    try {
      const found = await this.#budget.call('read the certificate records', () =>
        mapConcurrently(environments, concurrency, async (environment) =>
          environmentAtRisk(environment, await store.readStatus(environment.projectId, environment.environmentId), now(), policy),
        ),
      );
      return { environments: environments.length, atRisk: found.filter((entry): entry is EnvironmentAtRisk => entry !== undefined) };
    } catch (error) {
      return { environments: environments.length, atRisk: [], error: error instanceof GatewayError ? error.code : 'InternalError' };
    }
  }
}
