/**
 * Searches what an app run left behind (its printed output, the telemetry it exported and every blob it stored) for
 * secrets: the upstream token, every certificate secret the emulator handed out, and any
 * value tests marked with the `CANARY-SECRET-` prefix. Only the container meant for
 * certificate secrets may hold those.
 */
import { BlobServiceClient } from '@azure/storage-blob';

export const canaryPrefix = 'CANARY-SECRET-';

export interface SecretFinding {
  where: string;
  secret: string;
}

export async function scanForSecrets(options: {
  lines: string[];
  /** What the app exported (OTLP payloads a test's collector received): no attribute may hold a secret. */
  payloads?: string[];
  connectionString: string;
  secrets: string[];
  allowedContainers: string[];
}): Promise<SecretFinding[]> {
  const secrets = options.secrets.filter((secret) => secret.length >= 8);
  const findings: SecretFinding[] = [];
  const check = (where: string, text: string) => {
    for (const secret of secrets) if (text.includes(secret)) findings.push({ where, secret: `${secret.slice(0, 4)}…` });
    const canary = new RegExp(`${canaryPrefix}[\\w-]*`).exec(text);
    if (canary) findings.push({ where, secret: canary[0] });
  };
  options.lines.forEach((line, index) => check(`output line ${index + 1}`, line));
  (options.payloads ?? []).forEach((payload, index) => check(`telemetry payload ${index + 1}`, payload));
  const service = BlobServiceClient.fromConnectionString(options.connectionString);
  for await (const container of service.listContainers()) {
    if (options.allowedContainers.includes(container.name)) continue;
    const client = service.getContainerClient(container.name);
    for await (const blob of client.listBlobsFlat()) {
      check(`${container.name}/${blob.name}`, (await client.getBlockBlobClient(blob.name).downloadToBuffer()).toString('utf8'));
    }
  }
  return findings;
}
