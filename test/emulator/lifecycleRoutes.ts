/**
 * The lifecycle service's certificate download (Doc 3, endpoint 2): 200 in every case but a
 * failed authentication, success read from `IsSuccess`; 429 with `retry-after` (seconds) past
 * one call per environment per minute; a base64 zip holding a .pfx and a .cer.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { zipSync } from 'fflate';
import type { EmulatorContext, Reply } from './emulatorServer';

export interface LifecycleState {
  /** Last download per environment, for the rate limit. */
  lastDownloadAt: Map<string, number>;
  /** Every certificate secret handed out, for tests that search logs and storage for them. */
  issuedSecrets: string[];
}

const versionHeaderValue = '2017-09-15';

function failure(message: string): Reply {
  return { status: 200, body: { Data: null, IsSuccess: false, OperationActivityId: randomUUID(), ErrorMessage: message, VersionEOL: '9999-12-31T23:59:59Z' } };
}

export function handleLifecycle(context: EmulatorContext, method: string, url: URL, headers: IncomingHttpHeaders): Reply {
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

  const certificate = randomBytes(256);
  const name = `env-${environmentId.slice(0, 8)}`;
  const zip = zipSync({ [`${name}.pfx`]: randomBytes(512), [`${name}.cer`]: certificate });
  const expiry = new Date(now + 180 * 24 * 3600_000);
  const secret = randomBytes(24).toString('base64');
  context.lifecycle.issuedSecrets.push(secret);
  return {
    status: 200,
    body: {
      Data: {
        CertificateZipEncoded: Buffer.from(zip).toString('base64'),
        CertificateSecretEncoded: secret,
        CertificateThumbprint: createHash('sha1').update(certificate).digest('hex').toUpperCase(),
        ExpirationDateTimeUTC: expiry.toUTCString(),
        ExpirationISODateTimeUTC: expiry.toISOString(),
        Filename: `${name}.zip`,
      },
      IsSuccess: true,
      OperationActivityId: randomUUID(),
      ErrorMessage: null,
      VersionEOL: '9999-12-31T23:59:59Z',
    },
  };
}
