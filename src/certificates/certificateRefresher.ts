/**
 * Keeps a current certificate bundle for each configured environment:
 * it downloads only when the stored one is missing, near expiry, or a refresh is forced; at
 * most once per environment per window across all instances; and stores a bundle only after
 * checking it. Every environment's outcome is logged and recorded, and one running out of
 * certificate (certificateWatch) is warned of, each run; the secret and its password never are.
 */
import { mapConcurrently } from '../concurrency';
import { GatewayError } from '../errors';
import { certificateDownloadResponse } from '../spec';
import type { UpstreamClient } from '../upstream';
import { parseRetryAfterMs } from '../upstream';
import { checkBundle, decodeStrictBase64 } from './bundleCheck';
import type { AttemptRecord, CertificateMetadata, CertificateStore, EnvironmentRecord } from './certificateStore';
import { environmentAtRisk, type WatchPolicy } from './certificateWatch';
import { verifyCertificateBundle } from './certificateVerification';
import type { DistributedRateLimiter } from './rateLimiter';
import { recordCertificateExpiry } from '../telemetry';
import type { CertificateEnvironment } from '../settings';

export type { CertificateEnvironment } from '../settings';

export interface RefreshOutcome extends CertificateEnvironment {
  outcome: AttemptRecord['outcome'];
  thumbprint?: string;
  expiresAt?: string;
  retryAt?: string;
  error?: { code: string; message: string };
}

export interface RefreshOptions {
  force: boolean;
  /** What asked: the timer, the refresh route. */
  trigger: string;
  token: string;
}

export interface RefresherDependencies {
  store: CertificateStore;
  limiter: DistributedRateLimiter;
  upstream: UpstreamClient;
  /** Name and value of the version header the download needs. */
  versionHeader: [string, string];
  /** Renew when the stored certificate expires sooner than `renewBeforeMs`; warn as certificateWatch says. */
  policy: WatchPolicy;
  concurrency: number;
  /** Most bytes a bundle's entries may hold, inflated (`CERT_MAX_BUNDLE_BYTES`). */
  maxBundleBytes: number;
  now: () => number;
  log: (line: string) => void;
  /** Warnings: an environment running out of certificate. */
  warn: (line: string) => void;
}

export function limiterKey(environment: CertificateEnvironment): string {
  return `${environment.projectId}/${environment.environmentId.toLowerCase()}`;
}

export function downloadPath(environment: CertificateEnvironment): string {
  return `environmentinfo/v1/rsatdownload/project/${environment.projectId}/environment/${encodeURIComponent(environment.environmentId)}`;
}

export class CertificateRefresher {
  constructor(private readonly deps: RefresherDependencies) {}

  /** Refreshes several environments, a few at a time; one's failure never stops the others. */
  refreshAll(environments: readonly CertificateEnvironment[], options: RefreshOptions): Promise<RefreshOutcome[]> {
    return mapConcurrently(environments, this.deps.concurrency, (environment) => this.refresh(environment, options));
  }

  async refresh(environment: CertificateEnvironment, options: RefreshOptions): Promise<RefreshOutcome> {
    let outcome: RefreshOutcome;
    let status: Pick<EnvironmentRecord, 'current'> | undefined;
    try {
      status = await this.deps.store.readStatus(environment.projectId, environment.environmentId);
      outcome = await this.#refresh(environment, status.current, options);
    } catch (error) {
      const gatewayError = error instanceof GatewayError ? error : new GatewayError('InternalError', 'The refresh failed.');
      outcome = { ...environment, outcome: 'failed', error: { code: gatewayError.code, message: gatewayError.message } };
    }
    const { projectId, environmentId, ...rest } = outcome;
    recordCertificateExpiry(environment, outcome.expiresAt ?? status?.current?.expiresAt);
    this.deps.log(JSON.stringify({ event: 'certificate', projectId, environmentId, trigger: options.trigger, ...rest }));
    if (outcome.outcome === 'fresh') return outcome;
    const attempt: AttemptRecord = { at: new Date(this.deps.now()).toISOString(), trigger: options.trigger, ...rest };
    await this.deps.store.recordAttempt(projectId, environmentId, attempt);
    // One warning line per environment running out, each run; when even the current
    // certificate could not be read, the failed outcome above is all there is to say.
    const atRisk = status && environmentAtRisk(environment, { current: status.current, lastAttempt: attempt }, this.deps.now(), this.deps.policy);
    if (atRisk) this.deps.warn(JSON.stringify({ event: 'certificate-at-risk', trigger: options.trigger, ...atRisk }));
    return outcome;
  }

  async #refresh(environment: CertificateEnvironment, current: CertificateMetadata | undefined, options: RefreshOptions): Promise<RefreshOutcome> {
    const now = this.deps.now();
    if (current && !options.force && Date.parse(current.expiresAt) - now > this.deps.policy.renewBeforeMs) {
      return { ...environment, outcome: 'fresh', thumbprint: current.thumbprint, expiresAt: current.expiresAt };
    }

    const key = limiterKey(environment);
    const acquired = await this.deps.limiter.tryAcquire(key, now);
    if (!acquired.allowed) return { ...environment, outcome: 'rate-limited', retryAt: new Date(acquired.retryAt).toISOString() };

    const response = await this.deps.upstream.send({
      method: 'GET',
      url: `${this.deps.upstream.baseUrl}/${downloadPath(environment)}`,
      headers: { 'content-type': 'application/json', [this.deps.versionHeader[0]]: this.deps.versionHeader[1] },
      token: options.token,
    });
    if (response.status === 429) {
      const retryAt = this.deps.now() + (parseRetryAfterMs((name) => response.headers[name], this.deps.now()) ?? 60_000);
      await this.deps.limiter.deferUntil(key, retryAt, this.deps.now());
      return { ...environment, outcome: 'rate-limited', retryAt: new Date(retryAt).toISOString() };
    }
    if (response.status !== 200) {
      return failed(environment, 'UpstreamBadResponse', `The lifecycle service answered ${response.status}.`);
    }
    let body: unknown;
    try {
      body = JSON.parse(response.bodyText);
    } catch {
      return failed(environment, 'UpstreamBadResponse', 'The lifecycle service answered with a body that is not JSON.');
    }
    const parsed = certificateDownloadResponse.safeParse(body);
    if (!parsed.success) return failed(environment, 'UpstreamBadResponse', 'The lifecycle service answer lacks IsSuccess.');
    const answer = parsed.data;
    // The service answers 200 in every case; success is read from IsSuccess.
    if (!answer.IsSuccess) return failed(environment, 'DownloadFailed', answer.ErrorMessage ?? 'The lifecycle service reported a failure without a message.');

    const data = answer.Data ?? {};
    const bundle = await checkBundle(data.CertificateZipEncoded, this.deps.maxBundleBytes);
    if (!bundle.ok) return failed(environment, bundle.problem, bundle.message);
    const expectedThumbprint = data.CertificateThumbprint?.trim();
    if (!expectedThumbprint || !/^[A-Za-z0-9]{1,128}$/.test(expectedThumbprint))
      return failed(environment, 'UpstreamBadResponse', 'The answer has no usable certificate thumbprint.');
    const secret = secretOf(data.CertificateSecretEncoded);
    if (!secret) return failed(environment, 'UpstreamBadResponse', 'The answer holds no certificate secret that decodes from base64 to text.');

    // The certificate itself decides: it opens with the secret, is the one the answer
    // and the .cer name, and is valid now. A bundle refused here never replaces the current one.
    const certificate = verifyCertificateBundle({
      pfx: bundle.pfx.content,
      cer: bundle.cer.content,
      password: secret.password,
      expectedThumbprint,
      now: this.deps.now(),
    });
    if (!certificate.ok) return failed(environment, certificate.problem, certificate.message);

    const { thumbprint, notBefore, expiresAt, subject, issuer } = certificate;
    const metadata: CertificateMetadata = {
      ...environment,
      thumbprint,
      expiresAt,
      notBefore,
      subject,
      issuer,
      // Kept only as what the service said; the certificate's own dates are the ones used.
      serviceSaid: { expirationDateTimeUtc: data.ExpirationDateTimeUTC?.slice(0, 100), expirationIsoDateTimeUtc: data.ExpirationISODateTimeUTC?.slice(0, 100) },
      filename: safeFilename(data.Filename, thumbprint),
      files: bundle.files.map(({ name, bytes }) => ({ name, bytes })),
      fetchedAt: new Date(this.deps.now()).toISOString(),
      fetchedBy: options.trigger,
      operationActivityId: answer.OperationActivityId,
    };
    await this.deps.store.save(metadata, bundle.zip, secret.encoded);
    return { ...environment, outcome: 'downloaded', thumbprint, expiresAt };
  }
}

function failed(environment: CertificateEnvironment, code: string, message: string): RefreshOutcome {
  return { ...environment, outcome: 'failed', error: { code, message: message.slice(0, 1000) } };
}

/**
 * The secret as answered (what is stored) and the .pfx password it encodes: `CertificateSecretEncoded`
 * is the password's base64 (as the lifecycle service documents it; d365fo.tools decodes it the same way). Undefined when it is
 * missing or not base64 of text.
 */
function secretOf(encoded: string | undefined): { encoded: string; password: string } | undefined {
  const bytes = encoded ? decodeStrictBase64(encoded) : undefined;
  if (!encoded || !bytes || bytes.length === 0) return undefined;
  try {
    return { encoded, password: new TextDecoder('utf-8', { fatal: true }).decode(bytes) };
  } catch {
    return undefined;
  }
}

/** The zip's name as a single safe blob-name segment. */
function safeFilename(filename: string | undefined, thumbprint: string): string {
  const base =
    (filename ?? '')
      .split(/[\\/]/)
      .pop()
      ?.replace(/[^\w.-]/g, '_') ?? '';
  return base && base !== '.' && base !== '..' ? base : `${thumbprint}.zip`;
}
