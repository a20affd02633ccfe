/**
 * The app's collaborators, built once per process from the config and passed to handlers
 * (STYLE.md: dependencies are passed in, never reached for globally by the logic).
 */
import { DefaultAzureCredential } from '@azure/identity';
import { BlobServiceClient } from '@azure/storage-blob';
import { getConfig, type Config } from './config';
import { defaultOrchestrationSettings, OrchestrationEngine, type OrchestrationSettings } from './orchestration/orchestrationEngine';
import { OrchestrationStore } from './orchestration/orchestrationStore';
import { defaultRetryPolicy } from './upstream/retryStrategy';
import { credentialTokenSource, passthroughTokenSource, staticTokenSource, type TokenSource, type UpstreamName } from './upstream/tokenSource';
import { createUpstreamAgent, UpstreamClient } from './upstream/upstreamClient';

export interface Services {
  config: Config;
  upstreams: Record<UpstreamName, UpstreamClient>;
  tokens: TokenSource;
  orchestrations: OrchestrationEngine;
  now: () => number;
}

export function createTokenSource(config: Config): TokenSource {
  switch (config.UPSTREAM_AUTH) {
    case 'static':
      return staticTokenSource(config.UPSTREAM_STATIC_TOKEN ?? '');
    case 'passthrough':
      return passthroughTokenSource();
    case 'managed': {
      const credential = new DefaultAzureCredential();
      return credentialTokenSource(
        { management: credential, lifecycle: credential },
        { management: config.managementTokenScope, lifecycle: config.lifecycleTokenScope },
      );
    }
  }
}

export function orchestrationSettingsOf(config: Config): OrchestrationSettings {
  const minutes = (value: number) => value * 60_000;
  return {
    ...defaultOrchestrationSettings,
    pollInterval: { defaultMs: config.LRO_DEFAULT_POLL_SECONDS * 1000, floorMs: config.LRO_MIN_POLL_SECONDS * 1000, ceilingMs: config.LRO_MAX_POLL_SECONDS * 1000 },
    deadlineMs: {
      ...defaultOrchestrationSettings.deadlineMs,
      ...Object.fromEntries(Object.entries(config.LRO_DEADLINE_MINUTES).map(([name, value]) => [name, minutes(value)])),
    },
    retentionMs: config.ORCHESTRATION_RETENTION_HOURS * 3600_000,
  };
}

export function createServices(config: Config): Services {
  const dispatcher = createUpstreamAgent();
  const retryPolicy = { ...defaultRetryPolicy, maxRetries: config.UPSTREAM_MAX_RETRIES };
  const client = (baseUrl: string) => new UpstreamClient({ baseUrl, dispatcher, timeoutMs: config.UPSTREAM_TIMEOUT_MS, retryPolicy });
  const upstreams = { management: client(config.MANAGEMENT_BASE_URL), lifecycle: client(config.LIFECYCLE_BASE_URL) };
  const blobService = BlobServiceClient.fromConnectionString(config.AzureWebJobsStorage);
  return {
    config,
    upstreams,
    tokens: createTokenSource(config),
    orchestrations: new OrchestrationEngine({
      store: new OrchestrationStore(blobService.getContainerClient(config.ORCHESTRATION_CONTAINER)),
      upstream: upstreams.management,
      settings: orchestrationSettingsOf(config),
      now: Date.now,
      // The engine outlives any one invocation (a start settles in a later poll), so its lines
      // go to the process log, which the Node worker captures like context.log.
      // eslint-disable-next-line no-console
      log: (line) => console.log(line),
    }),
    now: Date.now,
  };
}

let services: Services | undefined;

export function getServices(): Services {
  services ??= createServices(getConfig());
  return services;
}
