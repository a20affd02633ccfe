/**
 * A realistic local session, as an operator's first minutes against `npm start` look: a few
 * deployments through the app (container groups, a private endpoint connection, a migration),
 * one failing on an image the registry cannot serve (the emulator fails an image whose name holds
 * "fail"), one still running. tools/consoleScreenshot.ts draws docs/console.png from it, and
 * test/e2e/consoleScreenshot.e2e.test.ts checks that the screenshot and this seed hold no test data.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';

/** The key of the sample settings (local.settings.sample.json), as docs/console.md gives it. */
export const sessionKey = 'local-function-key-0001';

/** The app's settings for the session: the poller is off, so the last deployment stays Running as a long one would. */
export const sessionSettings: Record<string, string> = {
  LOCAL_HOST_KEYS: JSON.stringify({ default: sessionKey }),
  LOCAL_HOST_TIMERS: 'off',
  GATEWAY_WAIT_MAX_SECONDS: '30',
  // The emulator settles in a second; an upstream that names no Retry-After is read again as soon.
  LRO_DEFAULT_POLL_SECONDS: '1',
};
export const sessionEmulator = { lroSteps: 1, retryAfterSeconds: 1 };

const subscription = '6d3c1f0e-52a4-4b8e-9c71-2f0a8e4b7d19';

/** One start of the session: what the console's list then shows of it. */
export interface SessionStart {
  /** Seconds after the session's start (scaled by seedLocalSession's `pace`). */
  at: number;
  operation: string;
  method: 'PUT' | 'POST';
  path: string;
  apiVersion: string;
  body: unknown;
  resource: string;
  group: string;
  status: 'Completed' | 'Failed' | 'Running';
}

function containerGroup(at: number, group: string, resource: string, image: string, status: SessionStart['status'] = 'Completed'): SessionStart {
  const container = { name: resource, properties: { image, ports: [{ port: 8080 }], resources: { requests: { cpu: 1, memoryInGB: 1.5 } } } };
  return {
    at,
    operation: 'ContainerGroups_CreateOrUpdate',
    method: 'PUT',
    path: `subscriptions/${subscription}/resourceGroups/${group}/providers/Vendor.ContainerInstance/containerGroups/${resource}`,
    apiVersion: '2025-09-01',
    body: { location: 'westeurope', properties: { osType: 'Linux', restartPolicy: 'Always', containers: [container] } },
    resource,
    group,
    status,
  };
}

export const sessionStarts: readonly SessionStart[] = [
  containerGroup(0, 'rg-storefront-prod', 'web-frontend', 'contoso.azurecr.io/storefront/web-frontend:4.12.0'),
  containerGroup(20, 'rg-storefront-prod', 'orders-api', 'contoso.azurecr.io/storefront/orders-api:2.7.3'),
  {
    at: 45,
    operation: 'PrivateEndpointConnections_CreateOrUpdate',
    method: 'PUT',
    path: `subscriptions/${subscription}/resourceGroups/rg-telemetry/providers/Vendor.EventHub/namespaces/evhns-telemetry-prod/privateEndpointConnections/pe-ingest-westeurope`,
    apiVersion: '2026-01-01',
    body: {
      properties: {
        privateEndpoint: { id: `/subscriptions/${subscription}/resourceGroups/rg-network/providers/Vendor.Network/privateEndpoints/pe-ingest-westeurope` },
        privateLinkServiceConnectionState: { status: 'Approved', description: 'Approved for the ingestion subnet' },
      },
    },
    resource: 'evhns-telemetry-prod/pe-ingest-westeurope',
    group: 'rg-telemetry',
    status: 'Completed',
  },
  containerGroup(80, 'rg-ops', 'failover-monitor', 'contoso.azurecr.io/ops/failover-monitor:1.3.0', 'Failed'),
  {
    at: 110,
    operation: 'ApiManagementService_MigrateToStv2',
    method: 'POST',
    path: `subscriptions/${subscription}/resourceGroups/rg-api/providers/Vendor.ApiManagement/service/apim-contoso-prod/migrateToStv2`,
    apiVersion: '2024-05-01',
    body: { mode: 'PreserveIp' },
    resource: 'apim-contoso-prod',
    group: 'rg-api',
    status: 'Completed',
  },
  containerGroup(150, 'rg-storefront-prod', 'web-frontend', 'contoso.azurecr.io/storefront/web-frontend:4.13.0'),
  containerGroup(185, 'rg-batch', 'batch-nightly', 'contoso.azurecr.io/batch/nightly-reports:5.0.1', 'Running'),
];

/**
 * Makes the session's starts through the app at `api(path)`, each `at` × `pace` seconds after the
 * first (pace 0: at once), waiting for each to end but the running one. Resolves with their ids.
 */
export async function seedLocalSession(api: (path: string) => string, pace = 1): Promise<string[]> {
  const began = Date.now();
  const ids: string[] = [];
  for (const start of sessionStarts) {
    await sleep(Math.max(0, began + start.at * pace * 1000 - Date.now()));
    const answer = await request(api(`${start.path}?api-version=${start.apiVersion}`), {
      method: start.method,
      headers: { 'x-functions-key': sessionKey, 'content-type': 'application/json' },
      body: JSON.stringify(start.body),
    });
    const text = await answer.body.text();
    const id = answer.headers['x-orchestration-id'];
    if (typeof id !== 'string') throw new Error(`${start.method} ${start.path} answered ${answer.statusCode} with no orchestration: ${text}`);
    ids.push(id);
    if (start.status === 'Running') continue;
    const ended = await request(api(`orchestrations/${id}?gateway-wait=30`), { headers: { 'x-functions-key': sessionKey } });
    const { runtimeStatus } = (await ended.body.json()) as { runtimeStatus?: string };
    if (runtimeStatus !== start.status) throw new Error(`${start.resource} ended ${runtimeStatus}, not ${start.status}`);
  }
  return ids;
}
