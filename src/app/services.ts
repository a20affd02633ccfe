/**
 * The app's collaborators (src/services.ts says what they are), built once per process from the
 * settings: the one place that knows every part, so none of the parts needs to know another's
 * wiring. Handlers are given `getServices` by their registration (functions/), never reach for it.
 */
import type { TokenCredential } from '@azure/identity';
import type { BlobServiceClient } from '@azure/storage-blob';
import { Agent } from 'undici';
import { CertificateRefresher } from '../certificates';
import { CertificateStore } from '../certificates';
import { CertificateWatch, type WatchPolicy } from '../certificates';
import { DownloadGuard } from '../certificates';
import { DistributedRateLimiter } from '../certificates';
import { getConfig, type Config } from '../settings';
import { deliveryPool, NotificationSender } from '../notifications';
import { chatEndOrigins, chatNotifierOf } from '../chatops';
import { engineOnContainer, type OrchestrationEngine } from '../orchestration';
import { orchestrationSettingsOf } from '../orchestration';
import type { Services } from '../services';

export type { Services } from '../services';
import { OrchestrationWatches } from '../orchestration';
import { WaitSlots } from '../access';
import { HealthMonitor, upstreamProbeDetail, type HealthChecks, type HealthMonitorOptions } from '../health';
import { accessPolicyOf } from '../access';
import { SharedCallerRates, type CallerRates } from '../access';
import { ShareBucketStore } from '../access';
import { IdleShareBuckets } from '../access';
import { UpstreamBudget } from '../upstream';
import { watchUpstreamBudget } from '../telemetry';
import { allExpiring, OnceMarkers } from '../storage';
import { UseCounters } from '../storage';
import { CircuitRecords } from '../notifications';
import { deliveriesOf } from '../notifications';
import { Approvals } from '../approvals';
import { approvalHolds } from '../approvals';
import { ApprovalWaits } from '../approvals';
import { StorageBudget } from '../storage';
import { blobServiceOf } from '../storage';
import { appVersion } from '../version';
import { defaultRetryPolicy } from '../upstream';
import { credentialOnFirstUse } from '../identity';
import { credentialTokenSource, passthroughTokenSource, staticTokenSource, type TokenSource } from '../upstream';
import { createUpstreamAgent, UpstreamClient, type UpstreamClientOptions } from '../upstream';

/**
 * The lifecycle service takes only delegated user tokens; for unattended use its docs use
 * the password grant of a public client app, which this credential performs.
 */
function lifecycleUserCredential(config: Config): TokenCredential | undefined {
  const { LIFECYCLE_TENANT_ID, LIFECYCLE_CLIENT_ID, LIFECYCLE_USERNAME, LIFECYCLE_PASSWORD } = config;
  if (!LIFECYCLE_TENANT_ID || !LIFECYCLE_CLIENT_ID || !LIFECYCLE_USERNAME || !LIFECYCLE_PASSWORD) return undefined;
  return credentialOnFirstUse(
    (identity) => new identity.UsernamePasswordCredential(LIFECYCLE_TENANT_ID, LIFECYCLE_CLIENT_ID, LIFECYCLE_USERNAME, LIFECYCLE_PASSWORD),
    config.TOKEN_TIMEOUT_MS,
    'the lifecycle upstream',
  );
}

export function createTokenSource(config: Config): TokenSource {
  switch (config.UPSTREAM_AUTH) {
    case 'static':
      return staticTokenSource(config.UPSTREAM_STATIC_TOKEN ?? '');
    case 'passthrough':
      return passthroughTokenSource();
    case 'managed': {
      const credential = credentialOnFirstUse((identity) => new identity.DefaultAzureCredential(), config.TOKEN_TIMEOUT_MS, 'the upstreams');
      return credentialTokenSource(
        { management: credential, lifecycle: lifecycleUserCredential(config) ?? credential },
        { management: config.managementTokenScope, lifecycle: config.lifecycleTokenScope },
      );
    }
  }
}

function createBackgroundToken(config: Config, tokens: TokenSource): Services['backgroundToken'] {
  if (tokens.mode !== 'passthrough') return (upstream) => tokens.getToken({ upstream });
  const userCredential = lifecycleUserCredential(config);
  const lifecycle =
    userCredential &&
    credentialTokenSource(
      { management: userCredential, lifecycle: userCredential },
      { management: config.lifecycleTokenScope, lifecycle: config.lifecycleTokenScope },
    );
  return async (upstream) => (upstream === 'lifecycle' && lifecycle ? lifecycle.getToken({ upstream }) : undefined);
}

/**
 * The checks behind `health`: no retry, a short budget, and a connection pool of their own
 * (two sockets per origin), so however often the anonymous route is called, probes never take
 * a socket or a retry budget from a real call.
 */
function healthChecks(config: Config, blobService: () => BlobServiceClient): HealthChecks {
  const timeoutMs = config.HEALTH_PROBE_TIMEOUT_MS;
  const probePool = new Agent({ connections: 2, keepAliveTimeout: 10_000 });
  const upstreamCheck = (baseUrl: string) => {
    const client = new UpstreamClient({
      baseUrl,
      dispatcher: probePool,
      timeoutMs,
      retryPolicy: { ...defaultRetryPolicy, maxRetries: 0 },
      maxResponseBytes: 64 * 1024,
    });
    // No token: this is a reachability probe, not a call.
    return async () => upstreamProbeDetail((await client.send({ method: 'GET', url: `${baseUrl}/` })).status);
  };
  const storageBudget = new StorageBudget(timeoutMs, 'Storage');
  return {
    // The orchestration container's properties, not the account's: Get Blob Service Properties
    // needs Microsoft.Storage/storageAccounts/blobServices/read, which the data roles the app is
    // given (Storage Blob Data Owner or Contributor) do not hold, while a container's read they do.
    // A container not made yet (404) is reachable storage all the same: the first start makes it.
    storage: async () => {
      const container = blobService().getContainerClient(config.ORCHESTRATION_CONTAINER);
      const exists = await storageBudget.call('answer', (abortSignal) => container.exists({ abortSignal }));
      return exists ? 'reachable' : 'reachable (its containers are made at first use)';
    },
    management: upstreamCheck(config.MANAGEMENT_BASE_URL),
    lifecycle: upstreamCheck(config.LIFECYCLE_BASE_URL),
  };
}

const day = 24 * 3600_000;

function watchPolicyOf(config: Config): WatchPolicy {
  return { renewBeforeMs: config.CERT_RENEW_BEFORE_DAYS * day, alertBeforeMs: config.CERT_ALERT_DAYS * day };
}

/** The certificate section of `health`: none without configured environments; else bounded by the probe's budget. */
function certificateWatchOf(config: Config, store: () => CertificateStore, policy: WatchPolicy): HealthMonitorOptions['certificates'] {
  if (config.CERT_ENVIRONMENTS.length === 0) return undefined;
  let watch: CertificateWatch | undefined;
  return () =>
    (watch ??= new CertificateWatch({
      store: store(),
      environments: config.CERT_ENVIRONMENTS,
      policy,
      timeoutMs: config.HEALTH_PROBE_TIMEOUT_MS,
      concurrency: config.CERT_CONCURRENCY,
      now: Date.now,
    })).report();
}

/** What lives in blob storage, and the client it is reached with. */
interface StoredServices {
  blobService: BlobServiceClient;
  orchestrations: OrchestrationEngine;
  /** The starts that wait for approval, on the engine's held starts (src/approvals). */
  approvals: Approvals;
  chatReplays: OnceMarkers;
  watches: OrchestrationWatches;
  certificates: Services['certificates'];
}

function createStoredServices(config: Config, upstreams: Services['upstreams']): StoredServices {
  const blobService = blobServiceOf(config.storage, config.TOKEN_TIMEOUT_MS);
  const certificateContainer = blobService.getContainerClient(config.CERT_CONTAINER);
  const limiter = new DistributedRateLimiter(certificateContainer, config.CERT_RATE_WINDOW_SECONDS * 1000, config.STORAGE_TIMEOUT_MS);
  const certificateStore = new CertificateStore(
    certificateContainer,
    blobService.getContainerClient(config.CERT_SECRET_CONTAINER),
    config.CERT_KEEP_BUNDLES,
    config.STORAGE_TIMEOUT_MS,
  );
  // One pool for every end notice, CloudEvent or chat message, rather than one each.
  const deliveries = deliveryPool();
  const events = config.NOTIFY_SIGNING_SECRET
    ? new NotificationSender({ signingSecret: config.NOTIFY_SIGNING_SECRET, timeoutMs: config.NOTIFY_TIMEOUT_MS, dispatcher: deliveries })
    : undefined;
  const orchestrationContainer = blobService.getContainerClient(config.ORCHESTRATION_CONTAINER);
  // A signature is refusable while its signed time is within the tolerance of now, on any
  // instance's clock: kept the tolerance and 5 minutes for clocks that differ, then the janitor's.
  const chatReplays = new OnceMarkers(
    orchestrationContainer,
    'chat-replay/',
    new StorageBudget(config.STORAGE_TIMEOUT_MS, 'Chat replay records'),
    (config.CHATOPS_TIMESTAMP_TOLERANCE_SECONDS + 300) * 1000,
  );
  // Posts per Slack response_url, app-wide: kept the URL's 30 minutes from its issue and 5 for clocks that differ.
  const postCounts = new UseCounters(
    orchestrationContainer,
    'chat-posts/',
    new StorageBudget(config.STORAGE_TIMEOUT_MS, 'Response URL post counts'),
    35 * 60_000,
  );
  const settings = orchestrationSettingsOf(config, chatEndOrigins(config));
  // A circuit nobody probed in the longest retry back-off and 5 minutes more has no delivery waiting on it.
  const circuits = new CircuitRecords(
    orchestrationContainer,
    new StorageBudget(config.STORAGE_TIMEOUT_MS, 'Receiver circuits'),
    settings.outbox.maxRetryMs + 300_000,
  );
  // One place each for the starts waiting for approval, in the same container (approvalWaits.ts).
  const approvalWaits = new ApprovalWaits(orchestrationContainer, new StorageBudget(config.STORAGE_TIMEOUT_MS, 'Orchestration storage'));
  const orchestrations = engineOnContainer(orchestrationContainer, {
    storageTimeoutMs: config.STORAGE_TIMEOUT_MS,
    expiringMarkers: allExpiring([
      chatReplays,
      postCounts,
      new IdleShareBuckets(
        orchestrationContainer,
        new StorageBudget(config.STORAGE_TIMEOUT_MS, 'Caller share buckets'),
        config.CALLER_SHARE_LEASE_SECONDS * 1000,
      ),
    ]),
    staleRecords: circuits,
    deliveries: deliveriesOf({ notifier: chatNotifierOf(config, events, deliveries, postCounts), circuits }),
    holds: approvalHolds(approvalWaits),
    upstream: upstreams.management,
    settings,
    now: Date.now,
    // The engine outlives any one invocation (a start settles in a later poll), so its lines
    // go to the process log, which the Node worker captures like context.log.
    // eslint-disable-next-line no-console
    log: (line) => console.log(line),
  });
  return {
    blobService,
    certificates: {
      store: certificateStore,
      downloadGuard: new DownloadGuard(limiter, Date.now),
      refresher: new CertificateRefresher({
        store: certificateStore,
        limiter,
        upstream: upstreams.lifecycle,
        versionHeader: [config.LIFECYCLE_VERSION_HEADER, config.LIFECYCLE_API_VERSION],
        policy: watchPolicyOf(config),
        concurrency: config.CERT_CONCURRENCY,
        maxBundleBytes: config.CERT_MAX_BUNDLE_BYTES,
        now: Date.now,
        // eslint-disable-next-line no-console
        log: (line) => console.log(line),
        warn: (line) => console.warn(line),
      }),
    },
    orchestrations,
    approvals: new Approvals(orchestrations, approvalWaits, Date.now),
    chatReplays,
    watches: new OrchestrationWatches(orchestrations),
  };
}

export function createServices(config: Config): Services {
  const dispatcher = createUpstreamAgent();
  const retryPolicy = { ...defaultRetryPolicy, maxRetries: config.UPSTREAM_MAX_RETRIES };
  const upstreamBudget = new UpstreamBudget();
  watchUpstreamBudget(() => upstreamBudget.byHeader());
  const client = (baseUrl: string, maxRetries: number, options: Pick<UpstreamClientOptions, 'maxResponseBytes' | 'observe' | 'clientRequestIds'> = {}) =>
    new UpstreamClient({
      baseUrl,
      dispatcher,
      timeoutMs: config.UPSTREAM_TIMEOUT_MS,
      retryPolicy: { ...retryPolicy, maxRetries },
      maxJsonDepth: config.UPSTREAM_MAX_JSON_DEPTH,
      ...options,
    });
  const upstreams = {
    management: client(config.MANAGEMENT_BASE_URL, config.UPSTREAM_MAX_RETRIES, {
      maxResponseBytes: config.UPSTREAM_MAX_RESPONSE_BYTES,
      observe: (response) => upstreamBudget.observe(response.headers),
      clientRequestIds: true,
    }),
    // One download per environment per minute: a repeated call could only earn a 429. Its answer
    // carries one bundle in base64 (4/3 of the zip, which is at most about the bundle's size).
    lifecycle: client(config.LIFECYCLE_BASE_URL, 0, { maxResponseBytes: 2 * config.CERT_MAX_BUNDLE_BYTES + 64 * 1024 }),
  };
  const tokens = createTokenSource(config);
  // Storage, and the package behind it, is built by the first call that needs it: a call passed
  // straight upstream never does, so a cold start's first answer does not wait for it.
  let stored: StoredServices | undefined;
  const storage = () => (stored ??= createStoredServices(config, upstreams));
  return {
    config,
    upstreams,
    tokens,
    backgroundToken: createBackgroundToken(config, tokens),
    get certificates() {
      return storage().certificates;
    },
    get orchestrations() {
      return storage().orchestrations;
    },
    get approvals() {
      return storage().approvals;
    },
    get chatReplays() {
      return storage().chatReplays;
    },
    waits: {
      get watches() {
        return storage().watches;
      },
      slots: new WaitSlots({ perCaller: config.GATEWAY_WAIT_MAX_PER_CALLER, perInstance: config.GATEWAY_WAIT_MAX_PER_INSTANCE }),
    },
    access: { policy: accessPolicyOf(config), rates: callerRatesOf(config, () => storage().blobService) },
    upstreamBudget,
    health: new HealthMonitor({
      checks: healthChecks(config, () => storage().blobService),
      certificates: certificateWatchOf(config, () => storage().certificates.store, watchPolicyOf(config)),
      upstreamBudget: () => upstreamBudget.snapshot(),
      version: appVersion,
      cacheMs: config.HEALTH_CACHE_SECONDS * 1000,
      now: Date.now,
    }),
    now: Date.now,
  };
}

/** The callers' shares, their buckets in the orchestration container (reached at the first call that has a rate). */
function callerRatesOf(config: Config, blobService: () => BlobServiceClient): CallerRates {
  return new SharedCallerRates({
    store: new ShareBucketStore(() => blobService().getContainerClient(config.ORCHESTRATION_CONTAINER)),
    maxLease: config.CALLER_SHARE_MAX_LEASE,
    leaseLifetimeMs: config.CALLER_SHARE_LEASE_SECONDS * 1000,
    timeoutMs: config.CALLER_SHARE_TIMEOUT_MS,
    attempts: config.CALLER_SHARE_ATTEMPTS,
    maxCallers: config.CALLER_SHARE_MAX_CALLERS,
    now: Date.now,
    warn: (line) => console.warn(line),
  });
}

let services: Services | undefined;

export function getServices(): Services {
  services ??= createServices(getConfig());
  return services;
}
