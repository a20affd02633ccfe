/**
 * The block of effective settings a start prints: which upstreams, how it authenticates to
 * them, which storage, the namespace, the public address, whether the access policy is
 * enforced, whether Slack, Teams, notifications and telemetry are on, and the schedules. It is read from the parsed settings (defaults included), so it
 * says what runs rather than what was typed, and it holds no secret: a storage account is
 * named by its account name or endpoint, never its key or signature.
 */
import { chatEnabled } from '../chatops';
import { chatPlatforms, chatSummaries } from '../chatops';
import { getConfig, type Config } from '../settings';
import { describeIdentityStorage, developmentStorage } from '../settings';

/** What `npm start` started itself in place of a setting left unset. */
export interface EmbeddedServices {
  /** The embedded management emulator's URL, when it serves both upstreams. */
  upstream?: string;
  /** The embedded Azurite's blob endpoint, when it is the storage. */
  storage?: string;
}

function connectionParts(connection: string): Map<string, string> {
  const parts = new Map<string, string>();
  for (const pair of connection.split(';')) {
    const equals = pair.indexOf('=');
    if (equals > 0) parts.set(pair.slice(0, equals).trim(), pair.slice(equals + 1).trim());
  }
  return parts;
}

/** The storage, named without its key or signature. */
function storageOf(config: Config, embedded: EmbeddedServices): string {
  if (embedded.storage) return `embedded Azurite in memory (${embedded.storage}); set AzureWebJobsStorage__accountName or AzureWebJobsStorage for real storage`;
  if (config.storage.kind === 'identity') return describeIdentityStorage(config.storage);
  const connection = config.storage.connectionString;
  if (connection.startsWith(developmentStorage)) return 'the local storage emulator (UseDevelopmentStorage=true: Azurite on 127.0.0.1:10000)';
  const parts = connectionParts(connection);
  const endpoint = parts.get('BlobEndpoint');
  const endpointOrigin = endpoint === undefined ? undefined : new URL(endpoint).origin;
  const account = parts.get('AccountName');
  if (account) return `account ${account}${endpointOrigin ? ` at ${endpointOrigin}` : ''}`;
  return `${endpointOrigin ?? 'a blob endpoint'} with a shared access signature`;
}

function upstreamsOf(config: Config, embedded: EmbeddedServices): string {
  if (embedded.upstream) return `embedded management emulator (${embedded.upstream}); set MANAGEMENT_BASE_URL and LIFECYCLE_BASE_URL for real ones`;
  return `management ${config.MANAGEMENT_BASE_URL}, lifecycle ${config.LIFECYCLE_BASE_URL}`;
}

function authOf(config: Config, embedded: EmbeddedServices): string {
  if (config.UPSTREAM_AUTH === 'passthrough') return "passthrough: each caller's own Authorization is sent upstream";
  if (config.UPSTREAM_AUTH === 'static') return embedded.upstream ? "static: the embedded emulator's token" : 'static: UPSTREAM_STATIC_TOKEN';
  return `managed identity: tokens for ${config.managementTokenScope} and ${config.lifecycleTokenScope}`;
}

function policyOf(config: Config): string {
  const scopes = config.ALLOWED_SCOPES
    ? `; ALLOWED_SCOPES holds calls to ${config.ALLOWED_SCOPES.length} scope${config.ALLOWED_SCOPES.length === 1 ? '' : 's'}`
    : '';
  // The app warns of an unset policy itself as it loads (in Azure too): said once, not again here.
  if (!config.ACCESS_POLICY) return `not enforced: ACCESS_POLICY not set (the warning above says what that allows)${scopes}`;
  return `ACCESS_POLICY enforced (${config.ACCESS_POLICY.length} rule${config.ACCESS_POLICY.length === 1 ? '' : 's'})${scopes}`;
}

function notificationsOf(config: Config): string {
  if (!config.NOTIFY_SIGNING_SECRET) return 'off: NOTIFY_SIGNING_SECRET not set, so no CloudEvent is sent (docs/notifications.md)';
  const origins = config.NOTIFY_ALLOWED_ORIGINS.length;
  const everyEnd = config.NOTIFY_URL ? ` and to NOTIFY_URL (${new URL(config.NOTIFY_URL).origin}) for every orchestration` : '';
  return `on: signed CloudEvents to x-gateway-notify targets at ${origins} allowed origin${origins === 1 ? '' : 's'}${everyEnd}`;
}

function telemetryOf(config: Config): string {
  const { OTEL_EXPORTER_OTLP_ENDPOINT: otlp, APPLICATIONINSIGHTS_CONNECTION_STRING: applicationInsights } = config;
  if (!otlp && !applicationInsights) return 'off: neither OTEL_EXPORTER_OTLP_ENDPOINT nor APPLICATIONINSIGHTS_CONNECTION_STRING set (docs/observability.md)';
  const to = [otlp && `OTLP to ${new URL(otlp).origin} (${config.OTEL_EXPORTER_OTLP_PROTOCOL})`, applicationInsights && 'Application Insights']
    .filter(Boolean)
    .join(' and ');
  return `on: traces and metrics to ${to}${config.TELEMETRY_SAMPLING_RATIO < 1 ? `, ${config.TELEMETRY_SAMPLING_RATIO} of new traces kept` : ''}`;
}

/** The routes registered that answer 404 for now: a chat platform's routes until it is set up. */
export function routesOff(config: Config = getConfig()): string[] {
  return chatPlatforms.filter((platform) => !chatEnabled(config, platform)).flatMap((platform) => platform.routes.map(({ route }) => route.name));
}

/** The rows of the block, as [label, value]; the local host adds its own (function keys). */
export function settingsSummary(embedded: EmbeddedServices = {}, config: Config = getConfig()): [string, string][] {
  const environments = config.CERT_ENVIRONMENTS.length;
  return [
    ['upstreams', upstreamsOf(config, embedded)],
    ['upstream auth', authOf(config, embedded)],
    ['storage', storageOf(config, embedded)],
    ['namespace', config.PROVIDER_NAMESPACE],
    ['public URL', config.APP_PUBLIC_URL ?? 'APP_PUBLIC_URL not set: links name the address each request came to'],
    ['access', policyOf(config)],
    ...chatSummaries(config),
    ['notifications', notificationsOf(config)],
    ['telemetry', telemetryOf(config)],
    [
      'schedules',
      `poller ${config.ORCHESTRATION_POLL_SCHEDULE}; certificate refresh ${config.CERT_REFRESH_SCHEDULE} (${environments === 0 ? 'no CERT_ENVIRONMENTS' : `${environments} environment${environments === 1 ? '' : 's'}`})`,
    ],
  ];
}
