/**
 * The lifecycle service's certificate download: 200 in every case but a
 * failed authentication, success read from `IsSuccess`; 429 with `retry-after` (seconds) past
 * one call per environment per minute; a base64 zip holding a real .pfx, encrypted with the
 * password whose base64 is `CertificateSecretEncoded` (a new one each call, as the service documents), and
 * its .cer. A scripted `certificate` answer asks for a faulty bundle, or another validity.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { makeCertificateBundle, type CertificateBundleOptions } from './certificateBundle';
import type { EmulatorOptions, Reply } from './emulatorOptions';

/** What these routes read of the emulator: its options, its address, and their own state. */
type EmulatorContext = { options: Required<Omit<EmulatorOptions, 'port'>>; baseUrl: string; lifecycle: LifecycleState };

export interface LifecycleState {
  /** Last download per environment, for the rate limit. */
  lastDownloadAt: Map<string, number>;
  /**
   * Every certificate secret handed out, base64 and decoded, for tests that search logs and
   * storage for them. A reset keeps them: a run is searched for all it was ever given.
   */
  issuedSecrets: string[];
}

/** The service's full-text date, e.g. "Thursday, June 30, 2022 8:52:13 PM". */
function fullTextDate(date: Date): string {
  const options: Intl.DateTimeFormatOptions = {
    timeZone: 'UTC',
    weekday: 'long',
    year: 'numeric',
    month: 'long',
    day: 'numeric',
    hour: 'numeric',
    minute: '2-digit',
    second: '2-digit',
  };
  return date.toLocaleString('en-US', options).replace(' at ', ' ');
}

const versionHeaderValue = '2017-09-15';

function failure(message: string): Reply {
  return { status: 200, body: { Data: null, IsSuccess: false, OperationActivityId: randomUUID(), ErrorMessage: message, VersionEOL: '9999-12-31T23:59:59Z' } };
}

export function handleLifecycle(
  context: EmulatorContext,
  method: string,
  url: URL,
  headers: IncomingHttpHeaders,
  bundleOptions: CertificateBundleOptions = {},
): Reply {
  const match = /^\/environmentinfo\/v1\/rsatdownload\/project\/([^/]+)\/environment\/([^/]+)$/.exec(url.pathname);
  if (!match || method !== 'GET') return { status: 404 };
  if (headers['x-vendor-version'] !== versionHeaderValue) return failure(`The x-vendor-version header must be ${versionHeaderValue}.`);
  const [, projectId, environmentId] = match as unknown as [string, string, string];
  if (!/^\d+$/.test(projectId)) return failure('The project id is not valid.');

  const key = `${projectId}/${environmentId.toLowerCase()}`;
  const now = context.options.now();
  const last = context.lifecycle.lastDownloadAt.get(key);
  if (last !== undefined && now - last < context.options.certificateWindowMs) {
    const waitSeconds = Math.ceil((context.options.certificateWindowMs - (now - last)) / 1000);
    return { status: 429, headers: { 'retry-after': String(waitSeconds) }, body: { error: 'Too many requests' } };
  }
  context.lifecycle.lastDownloadAt.set(key, now);

  // Environments whose id starts with "dead" do not exist, for tests of IsSuccess: false.
  if (environmentId.toLowerCase().startsWith('dead')) return failure('The environment was not found, or you are not its administrator.');

  const bundle = makeCertificateBundle(`env-${environmentId.slice(0, 8)}`, now, bundleOptions);
  context.lifecycle.issuedSecrets.push(bundle.secretEncoded, bundle.password);
  return {
    status: 200,
    body: {
      Data: {
        CertificateZipEncoded: bundle.zip.toString('base64'),
        CertificateSecretEncoded: bundle.secretEncoded,
        CertificateThumbprint: bundle.thumbprint,
        ExpirationDateTimeUTC: fullTextDate(bundle.notAfter),
        ExpirationISODateTimeUTC: bundle.notAfter.toISOString(),
        Filename: bundle.filename,
      },
      IsSuccess: true,
      OperationActivityId: randomUUID(),
      ErrorMessage: null,
      VersionEOL: '9999-12-31T23:59:59Z',
    },
  };
}
