/**
 * App settings, parsed once with zod.
 * A bad value stops start-up with one message naming every bad setting and what it accepts.
 */
import { z } from 'zod';
import { crossSettingRules, describeIssue } from './settingRules';
import {
  absoluteHttpUrl,
  accessRule,
  approvalBounds,
  appInsightsAuthentication,
  certificateEnvironment,
  chatSecret,
  containerName,
  httpUrlText,
  integerText,
  jsonSettingKeys,
  jsonText,
  notifyUrl,
  numberText,
  origin,
  publicBaseUrl,
  scopePrefix,
  signingSecret,
  storageConnectionString,
  timerSchedule,
} from './settingValues';
import { storageTargetOf, type StorageTarget } from './storageSettings';

const maxDeadlineMinutes = 30 * 24 * 60;

const settingsSchema = z.object({
  PORT: integerText(0, 65535).default(7071),
  /** The address callers use; every link the app hands out is built on it (src/http/appBase.ts). */
  APP_PUBLIC_URL: publicBaseUrl.optional(),
  MANAGEMENT_BASE_URL: absoluteHttpUrl,
  LIFECYCLE_BASE_URL: absoluteHttpUrl,
  PROVIDER_NAMESPACE: z
    .string()
    .regex(/^[A-Za-z][A-Za-z0-9]*$/, 'must be one word, e.g. Microsoft')
    .default('Vendor'),
  GATEWAY_PROPERTY_PREFIX: z.string().min(1).optional(),
  LIFECYCLE_VERSION_HEADER: z
    .string()
    .regex(/^[A-Za-z0-9-]+$/, 'must be an HTTP header name')
    .default('x-vendor-version'),
  LIFECYCLE_API_VERSION: z.string().min(1).default('2017-09-15'),
  UPSTREAM_AUTH: z.enum(['managed', 'passthrough', 'static']).default('managed'),
  UPSTREAM_STATIC_TOKEN: z.string().min(1).optional(),
  MANAGEMENT_TOKEN_SCOPE: z.string().min(1).optional(),
  LIFECYCLE_TOKEN_SCOPE: z.string().min(1).optional(),
  /** Set by the platform when App Service Authentication is on; only then are principal headers trusted. */
  WEBSITE_AUTH_ENABLED: z.stringbool().default(false),
  ALLOWED_SCOPES: jsonText(z.array(scopePrefix), '["/subscriptions/<id>"]').optional(),
  ACCESS_POLICY: jsonText(z.array(accessRule).max(200), '[{"callers":["key:0123456789ab"],"allow":["read"]}]').optional(),
  // Storage: a connection string, or the identity-based settings the Functions host reads
  // (src/storage/storageTarget.ts); none outside Azure is development storage (Azurite).
  AzureWebJobsStorage: storageConnectionString.optional(),
  AzureWebJobsStorage__accountName: z
    .string()
    .regex(/^[a-z0-9]{3,24}$/, 'must be a storage account name: 3 to 24 lowercase letters and digits')
    .optional(),
  // A bearer token is never sent over plain HTTP (the storage SDK refuses to), so only https.
  AzureWebJobsStorage__blobServiceUri: httpUrlText
    .refine(
      (value) => value.startsWith('https://'),
      'must be an https URL (a token is never sent over plain HTTP), e.g. https://<account>.blob.core.windows.net',
    )
    .transform((value) => value.replace(/\/+$/, ''))
    .optional(),
  AzureWebJobsStorage__credential: z
    .string()
    .transform((value) => value.toLowerCase())
    .pipe(z.literal('managedidentity', 'must be managedidentity, the one value the Functions host takes'))
    .optional(),
  AzureWebJobsStorage__clientId: z.guid('must be the client id (a GUID) of the user-assigned identity').optional(),
  AzureWebJobsStorage__managedIdentityResourceId: z
    .string()
    .regex(
      /^\/subscriptions\/[^/]+\/resourceGroups\/[^/]+\/providers\/Microsoft\.ManagedIdentity\/userAssignedIdentities\/[^/]+$/i,
      'must be the resource id of a user-assigned identity (/subscriptions/.../providers/Microsoft.ManagedIdentity/userAssignedIdentities/<name>)',
    )
    .optional(),
  // Set by the platform in Azure (which, by plan: src/storage/storageTarget.ts): there, development storage is never a fallback.
  WEBSITE_INSTANCE_ID: z.string().min(1).optional(),
  WEBSITE_SKU: z.string().min(1).optional(),
  WEBSITE_POD_NAME: z.string().min(1).optional(),
  STORAGE_TIMEOUT_MS: integerText(100, 120_000).default(10_000),
  // Each token request of the app's identities (storage, the upstreams, the telemetry exporter) fails past it, and the next asks again.
  TOKEN_TIMEOUT_MS: integerText(100, 120_000).default(10_000),
  CERT_ENVIRONMENTS: jsonText(z.array(certificateEnvironment), '[{"projectId":1,"environmentId":"<guid>"}]').default([]),
  CERT_REFRESH_SCHEDULE: timerSchedule.default('0 0 */6 * * *'),
  ORCHESTRATION_POLL_SCHEDULE: timerSchedule.default('*/10 * * * * *'),
  /** `debug` logs every poller run; otherwise only runs that did something or overran. */
  LOG_LEVEL: z.enum(['debug', 'information']).default('information'),
  UPSTREAM_TIMEOUT_MS: integerText(100, 600_000).default(60_000),
  /** Deepest JSON nesting of an upstream answer the app reads (its walks recurse): a deeper one is a 502. */
  UPSTREAM_MAX_JSON_DEPTH: integerText(16, 1000).default(128),
  // One management answer (a page of a list, a resource) is held whole before it is checked and
  // passed on: a runaway one must not exhaust memory, as many times as calls run at once.
  UPSTREAM_MAX_RESPONSE_BYTES: integerText(64 * 1024, 1024 * 1024 * 1024).default(64 * 1024 * 1024),
  UPSTREAM_MAX_RETRIES: integerText(0, 10).default(3),
  MAX_REQUEST_BODY_BYTES: integerText(1024, 100 * 1024 * 1024).default(4 * 1024 * 1024),
  MAX_PAGES: integerText(1, 100_000).default(1000),
  MAX_MERGED_ITEMS: integerText(1, 10_000_000).default(100_000),
  MAX_MERGED_BYTES: integerText(64 * 1024, 1024 * 1024 * 1024).default(32 * 1024 * 1024),
  LRO_DEFAULT_POLL_SECONDS: integerText(1, 3600).default(60),
  LRO_MIN_POLL_SECONDS: integerText(1, 3600).default(1),
  LRO_MAX_POLL_SECONDS: integerText(1, 86_400).default(600),
  LRO_POLL_LOOKAHEAD_SECONDS: integerText(0, 60).default(2),
  // At most 30 days: far beyond any documented operation, and always a time a date can hold.
  LRO_DEADLINE_MINUTES: jsonText(z.record(z.string(), z.number().positive().max(maxDeadlineMinutes)), '{"ApiManagementService_MigrateToStv2": 240}').default(
    {},
  ),
  ORCHESTRATION_RETENTION_HOURS: numberText(0, 24 * 365, { positive: true }).default(168),
  CERT_RENEW_BEFORE_DAYS: numberText(0, 3650).default(14),
  CERT_ALERT_DAYS: numberText(0, 3650).default(7),
  CERT_KEEP_BUNDLES: integerText(1, 50).default(3),
  CERT_RATE_WINDOW_SECONDS: integerText(1, 86_400).default(60),
  CERT_CONCURRENCY: integerText(1, 64).default(4),
  CERT_MAX_BUNDLE_BYTES: integerText(16 * 1024, 64 * 1024 * 1024).default(1024 * 1024),
  HEALTH_PROBE_TIMEOUT_MS: integerText(100, 30_000).default(2000),
  HEALTH_CACHE_SECONDS: integerText(0, 300).default(5),
  // The operator console's reads: entries per list page (each failed one's document is read
  // too), and the most starts its histogram lists (in list pages of at most 1000).
  CONSOLE_PAGE_SIZE: integerText(1, 1000).default(25),
  CONSOLE_HISTOGRAM_MAX_STARTS: integerText(1, 100_000).default(5000),
  CERT_CONTAINER: containerName.default('gateway-certificates'),
  CERT_SECRET_CONTAINER: containerName.default('gateway-certificate-secrets'),
  LIFECYCLE_TENANT_ID: z.string().min(1).optional(),
  LIFECYCLE_CLIENT_ID: z.string().min(1).optional(),
  LIFECYCLE_USERNAME: z.string().min(1).optional(),
  LIFECYCLE_PASSWORD: z.string().min(1).optional(),
  NOTIFY_URL: notifyUrl.optional(),
  NOTIFY_ALLOWED_ORIGINS: jsonText(z.array(origin).max(100), '["https://hooks.example.com"]').default([]),
  NOTIFY_SIGNING_SECRET: signingSecret.optional(),
  NOTIFY_MAX_ATTEMPTS: integerText(1, 50).default(8),
  NOTIFY_TIMEOUT_MS: integerText(100, 60_000).default(5000),
  NOTIFY_ORIGIN_CONCURRENCY: integerText(1, 64).default(2),
  NOTIFY_CIRCUIT_FAILURES: integerText(1, 100).default(3),
  NOTIFY_CIRCUIT_COOLDOWN_SECONDS: integerText(1, 86_400).default(60),
  NOTIFY_RUN_WAIT_MS: integerText(0, 60_000).default(1000),
  // The Azure front end ends an HTTP request at 230 s: a wait must end, and be answered, before.
  GATEWAY_WAIT_MAX_SECONDS: integerText(1, 220).default(200),
  // A held wait keeps a request, a socket and a share of its watch: one caller may not hold them all.
  GATEWAY_WAIT_MAX_PER_CALLER: integerText(1, 10_000).default(20),
  GATEWAY_WAIT_MAX_PER_INSTANCE: integerText(1, 10_000).default(200),
  // A caller's share held across instances (src/access/sharedCallerRates.ts): leases of calls from a bucket in storage.
  CALLER_SHARE_MAX_LEASE: integerText(1, 1000).default(10),
  CALLER_SHARE_LEASE_SECONDS: integerText(1, 60).default(10),
  CALLER_SHARE_TIMEOUT_MS: integerText(10, 10_000).default(200),
  CALLER_SHARE_ATTEMPTS: integerText(1, 10).default(3),
  CALLER_SHARE_MAX_CALLERS: integerText(1, 1_000_000).default(10_000),
  // Starts that wait for approval (an ACCESS_POLICY rule's `approval`, docs/approvals.md): how long
  // one waits when its rule says not, the longest a rule may ask, and how many wait at once.
  APPROVAL_DEFAULT_MINUTES: integerText(1, approvalBounds.maxMinutes).default(60),
  APPROVAL_MAX_MINUTES: integerText(1, approvalBounds.maxMinutes).default(1440),
  APPROVAL_MAX_PENDING_PER_CALLER: integerText(1, 10_000).default(20),
  APPROVAL_MAX_PENDING: integerText(1, 100_000).default(1000),
  // Three bounds of removals, each apart: orchestrations past their retention one poller run purges,
  // the ended ones one `DELETE orchestrations?…` purges, and the expired records (chat replay
  // records, post counts, share buckets; on the janitor's turn, stale receiver circuits) one run removes.
  ORCHESTRATION_PURGE_BATCH: integerText(1, 10_000).default(500),
  ORCHESTRATION_PURGE_REQUEST_MAX: integerText(1, 10_000).default(500),
  RECORDS_JANITOR_BATCH: integerText(1, 10_000).default(500),
  // Most orchestrations one bulk terminate or restart acts on (or a dry run lists); a continuation token goes on.
  ORCHESTRATION_BULK_BATCH: integerText(1, 1000).default(100),
  // Most stored orchestrations one list, count, purge or bulk request looks at (blob metadata only).
  ORCHESTRATION_QUERY_MAX_SCANNED: integerText(1, 1_000_000).default(10_000),
  // Steps one poller run makes at once: the upstream's read budget, not storage, is what bounds it.
  ORCHESTRATION_POLL_CONCURRENCY: integerText(1, 256).default(16),
  // A poll's answer is a status, or the resource at the end: a runaway one must not be held, by
  // as many polls as run at once.
  ORCHESTRATION_POLL_MAX_BYTES: integerText(64 * 1024, 256 * 1024 * 1024).default(8 * 1024 * 1024),
  // How long one poller run begins due steps (a backlog is worked off past the schedule's next
  // run, which waits); well within the Functions timeout (5 minutes by default on Consumption).
  ORCHESTRATION_RUN_MAX_SECONDS: integerText(1, 600).default(60),
  // What one instance keeps of the documents it last wrote, so its next poll needs no read.
  ORCHESTRATION_CACHE_MB: integerText(0, 1024).default(16),
  // The stored documents one `showInput=true` list answer reads for their inputs: past it the
  // answer ends and its continuation token reads on.
  ORCHESTRATION_LIST_INPUT_BYTES: integerText(64 * 1024, 256 * 1024 * 1024).default(4 * 1024 * 1024),
  ORCHESTRATION_JANITOR_MINUTES: integerText(1, 7 * 24 * 60).default(60),
  // Recovery after an instance stopped: how long one instance's claim on a poll holds before another
  // may make it, and how long a start cut between its claim and its answer's record waits before it
  // ends StartInterrupted (never less than its upstream call and writes could still take: see engineSettings.ts).
  ORCHESTRATION_CLAIM_SECONDS: integerText(1, 3600).default(60),
  ORCHESTRATION_INTERRUPTED_AFTER_SECONDS: integerText(1, 86_400).default(600),
  // Tries of each write recording what the upstream answered a start (each within STORAGE_TIMEOUT_MS):
  // the upstream has acted, so one transient storage failure must not lose the start.
  ORCHESTRATION_START_RECORD_ATTEMPTS: integerText(1, 10).default(3),
  // Chat-ops (src/chatops): each platform's route is off until its secret and a rule naming its users exist.
  SLACK_SIGNING_SECRET: chatSecret.optional(),
  // Where Slack's response_url may point: the end of a command is posted there, nowhere else.
  SLACK_RESPONSE_URL_ORIGINS: jsonText(z.array(origin).min(1).max(20), '["https://hooks.slack.com"]').default(['https://hooks.slack.com']),
  // An incoming webhook for ends that come after a response_url expired (Slack keeps one 30 minutes).
  SLACK_WEBHOOK_URL: notifyUrl.optional(),
  // An incoming webhook to the approvers' channel: a start waiting for approval is posted there with Approve / Reject buttons.
  SLACK_APPROVAL_WEBHOOK_URL: notifyUrl.optional(),
  TEAMS_WEBHOOK_SECRET: chatSecret.refine((value) => /^[A-Za-z0-9+/]+={0,2}$/.test(value), 'must be the base64 security token Teams shows').optional(),
  // A Teams Workflows webhook ("post to a channel when a webhook request is received") for the ends.
  TEAMS_WORKFLOW_URL: notifyUrl.optional(),
  // Slack waits 3 s for an answer, Teams 5 s: the app answers by these at the latest, whatever the
  // upstream does, and the 500 ms left are for the request's and the answer's way to and from the platform.
  SLACK_ACK_BUDGET_MS: integerText(100, 2500).default(2000),
  TEAMS_ACK_BUDGET_MS: integerText(100, 4500).default(4000),
  // Signed requests older or newer than this are refused (Slack's documented 5 minutes); seen signatures are kept as long.
  CHATOPS_TIMESTAMP_TOLERANCE_SECONDS: integerText(30, 900).default(300),
  CHATOPS_REPLAY_CACHE_SIZE: integerText(100, 1_000_000).default(10_000),
  CHATOPS_MAX_BODY_BYTES: integerText(1024, 256 * 1024).default(16 * 1024),
  CHATOPS_MAX_COMMAND_CHARS: integerText(16, 1000).default(200),
  // Slack takes at most 5 posts to one response_url: attempts of the end post stop there.
  CHATOPS_RESPONSE_URL_MAX_POSTS: integerText(1, 5).default(5),
  // Telemetry (src/telemetry/): nothing is loaded or exported unless one of the two exporters is set.
  OTEL_EXPORTER_OTLP_ENDPOINT: httpUrlText.optional(),
  OTEL_EXPORTER_OTLP_PROTOCOL: z
    .enum(['http/protobuf', 'http/json'], 'must be http/protobuf or http/json (the app exports OTLP over HTTP)')
    .default('http/protobuf'),
  OTEL_SERVICE_NAME: z.string().min(1).max(256).default('management-gateway'),
  OTEL_METRIC_EXPORT_INTERVAL: integerText(1000, 3_600_000).default(60_000),
  APPLICATIONINSIGHTS_CONNECTION_STRING: z
    .string()
    .regex(/InstrumentationKey=/i, 'must be an Application Insights connection string (InstrumentationKey=...;IngestionEndpoint=...)')
    .optional(),
  // Microsoft Entra ID sign-in of the exporter to an Application Insights with local auth off.
  APPLICATIONINSIGHTS_AUTHENTICATION_STRING: appInsightsAuthentication.optional(),
  TELEMETRY_SAMPLING_RATIO: numberText(0, 1).default(1),
  ORCHESTRATION_CONTAINER: containerName.default('gateway-orchestrations'),
});

export type Settings = z.output<typeof settingsSchema>;

/**
 * Every setting at its default: what each part of the app starts from when built without the
 * app's settings (its tests, the bench), so no default is written twice. The two settings without
 * one are given addresses nothing listens on.
 */
export const defaultSettings: Settings = settingsSchema.parse({ MANAGEMENT_BASE_URL: 'http://127.0.0.1:9', LIFECYCLE_BASE_URL: 'http://127.0.0.1:9' });

/** Every setting the app reads. */
export const settingNames = Object.keys(settingsSchema.shape);

export interface Config extends Omit<Settings, 'GATEWAY_PROPERTY_PREFIX' | 'ALLOWED_SCOPES'> {
  GATEWAY_PROPERTY_PREFIX: string;
  /** The storage every storage use of the app reaches, and how it signs in. */
  storage: StorageTarget;
  ALLOWED_SCOPES: string[] | undefined;
  managementTokenScope: string;
  lifecycleTokenScope: string;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid app settings:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Settings whose value is still a Key Vault reference: the platform passes the reference's own
 * text on when it cannot read the secret (the identity lacks Key Vault Secrets User, or
 * keyVaultReferenceIdentity names none), and that text is no secret (the vault's name is guessable
 * from the app's), so it must never be taken as one: a signing key anyone could rebuild.
 */
function unresolvedReferences(present: Record<string, string | undefined>): string[] {
  return settingNames.filter((name) => /^\s*@Microsoft\.KeyVault\(/i.test(present[name] ?? ''));
}

const unresolvedReferenceProblem = (name: string) =>
  `${name} is a Key Vault reference the platform could not resolve, so the app does not start rather than take its text as the secret: give the app's identity Key Vault Secrets User on the vault (and name that identity in the site's keyVaultReferenceIdentity), then restart the app`;

/**
 * Parses settings from an environment; throws one ConfigError naming every bad setting. Each
 * setting is parsed on its own, so the rules across settings (settingRules.ts) run on those
 * that are valid and their problems are listed with the others.
 */
export function parseConfig(env: Record<string, string | undefined>): Config {
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''));
  const unresolved = unresolvedReferences(present);
  const problems: string[] = unresolved.map(unresolvedReferenceProblem);
  const parsed: Record<string, unknown> = {};
  const valid = new Set<string>();
  for (const [name, schema] of Object.entries(settingsSchema.shape)) {
    if (unresolved.includes(name)) continue;
    const result = (schema as z.ZodType).safeParse(present[name]);
    if (result.success) {
      parsed[name] = result.data;
      valid.add(name);
    } else {
      problems.push(...result.error.issues.map((issue) => describeIssue(name, issue, present[name], jsonSettingKeys)));
    }
  }
  for (const rule of crossSettingRules) {
    if (rule.reads.every((name) => valid.has(name))) problems.push(...rule.check(parsed as unknown as Settings));
  }
  if (problems.length > 0) throw new ConfigError(problems);
  const settings = parsed as Settings;
  return {
    ...settings,
    storage: storageTargetOf(settings),
    GATEWAY_PROPERTY_PREFIX: settings.GATEWAY_PROPERTY_PREFIX ?? `${settings.PROVIDER_NAMESPACE}.WindowsAzure.ApiManagement.Gateway`,
    ALLOWED_SCOPES: settings.ALLOWED_SCOPES,
    managementTokenScope: settings.MANAGEMENT_TOKEN_SCOPE ?? `${settings.MANAGEMENT_BASE_URL}/.default`,
    // The lifecycle service's docs show its host followed by `//.default` (double slash).
    lifecycleTokenScope: settings.LIFECYCLE_TOKEN_SCOPE ?? `${settings.LIFECYCLE_BASE_URL}//.default`,
  };
}

let cached: Config | undefined;

/** The process's settings, parsed on first use. */
export function getConfig(): Config {
  cached ??= parseConfig(process.env);
  return cached;
}

/** For tests and the local host, which set the environment before loading the app. */
export function resetConfigForTests(): void {
  cached = undefined;
}
