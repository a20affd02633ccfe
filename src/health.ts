/**
 * Liveness with dependency checks: the app's version, and whether storage and each upstream
 * answer. An upstream "answers" when it returns any HTTP status; only silence counts as down.
 */
import { BlobServiceClient } from '@azure/storage-blob';
import type { Services } from './services';
import type { UpstreamName } from './upstream/tokenSource';

export interface DependencyStatus {
  ok: boolean;
  detail: string;
  durationMs: number;
}

export interface HealthReport {
  status: 'Healthy' | 'Degraded';
  version: string;
  dependencies: Record<'storage' | UpstreamName, DependencyStatus>;
}

async function timed(check: () => Promise<string>, now: () => number): Promise<DependencyStatus> {
  const started = now();
  try {
    const detail = await check();
    return { ok: true, detail, durationMs: now() - started };
  } catch (error) {
    return { ok: false, detail: (error as { code?: string }).code ?? (error as Error).name ?? 'error', durationMs: now() - started };
  }
}

export async function checkHealth(services: Services, version: string): Promise<HealthReport> {
  const upstreamCheck = (name: UpstreamName) => async () => {
    const client = services.upstreams[name];
    // No token: this is a reachability probe, not a call.
    const response = await client.send({ method: 'GET', url: `${client.baseUrl}/` });
    return `HTTP ${response.status}`;
  };
  const [storage, management, lifecycle] = await Promise.all([
    timed(async () => {
      const blobService = BlobServiceClient.fromConnectionString(services.config.AzureWebJobsStorage);
      await blobService.getProperties({ abortSignal: AbortSignal.timeout(5000) });
      return 'reachable';
    }, services.now),
    timed(upstreamCheck('management'), services.now),
    timed(upstreamCheck('lifecycle'), services.now),
  ]);
  const dependencies = { storage, management, lifecycle };
  return { status: Object.values(dependencies).every((dependency) => dependency.ok) ? 'Healthy' : 'Degraded', version, dependencies };
}
