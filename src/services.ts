/**
 * The app's collaborators, built once per process from the config and passed to handlers
 * (STYLE.md: dependencies are passed in, never reached for globally by the logic).
 */
import { DefaultAzureCredential } from '@azure/identity';
import { getConfig, type Config } from './config';
import { defaultRetryPolicy } from './upstream/retryStrategy';
import { credentialTokenSource, passthroughTokenSource, staticTokenSource, type TokenSource, type UpstreamName } from './upstream/tokenSource';
import { createUpstreamAgent, UpstreamClient } from './upstream/upstreamClient';

export interface Services {
  config: Config;
  upstreams: Record<UpstreamName, UpstreamClient>;
  tokens: TokenSource;
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

export function createServices(config: Config): Services {
  const dispatcher = createUpstreamAgent();
  const retryPolicy = { ...defaultRetryPolicy, maxRetries: config.UPSTREAM_MAX_RETRIES };
  const client = (baseUrl: string) => new UpstreamClient({ baseUrl, dispatcher, timeoutMs: config.UPSTREAM_TIMEOUT_MS, retryPolicy });
  return {
    config,
    upstreams: { management: client(config.MANAGEMENT_BASE_URL), lifecycle: client(config.LIFECYCLE_BASE_URL) },
    tokens: createTokenSource(config),
    now: Date.now,
  };
}

let services: Services | undefined;

export function getServices(): Services {
  services ??= createServices(getConfig());
  return services;
}
