/**
 * The stored record of an environment's certificate, as the certificate route and chat's `cert`
 * command read it. Metadata only: the secret lives in its own container and is never read here.
 */
import { GatewayError } from '../errors';
import type { CertificateStore, EnvironmentRecord } from './certificateStore';

/** The record, or a 404 when no certificate was ever fetched for the environment. */
export async function fetchedCertificate(store: Pick<CertificateStore, 'read'>, projectId: number, environmentId: string): Promise<EnvironmentRecord> {
  const record = await store.read(projectId, environmentId);
  if (!record.current && !record.lastAttempt) throw new GatewayError('NotFound', 'No certificate has been fetched for this environment.');
  return record;
}
