/**
 * What the orchestration engine's parts share: its settings and their defaults, what it is
 * built from, and the shapes of what it is asked and answers. No behaviour here.
 */
import { defaultSettings, type Settings } from '../settings';
import { engineLimits } from '../settings';
import type { UpstreamClient, UpstreamResponse } from '../upstream';
import type { PollIntervalPolicy } from './lroRules';
import type { OrchestrationIndex } from './orchestrationIndex';
import type { OrchestrationState } from './orchestrationState';
import type { OrchestrationStore } from './orchestrationStore';
import type { OutboxPolicy } from './outbox';
import type { Expiring } from '../storage';
import type { KeySchedule } from './orchestrationIndex';
import type { Ending } from './transitions';
import type { StoredState } from './orchestrationStore';

export interface OrchestrationSettings {
  pollInterval: PollIntervalPolicy;
  /** How long an operation may run, by operationId; others get `defaultDeadlineMs`. */
  deadlineMs: Record<string, number>;
  defaultDeadlineMs: number;
  /** How long one instance holds a poll before another may take it. */
  claimMs: number;
  /** How long finished orchestrations are kept. */
  retentionMs: number;
  /** A start that never got its upstream answer (its instance died) fails after this. */
  pendingTimeoutMs: number;
  /** Deliveries in flight at once in one instance, and purges and janitor checks at once in one run. */
  concurrency: number;
  /**
   * Due steps (polls, deadlines) one run makes at once. The upstream's budget is the bound that
   * matters (ARM: about 12,000 reads an hour per principal, 250 in a burst), not storage's.
   */
  pollConcurrency: number;
  /** Most bytes of one poll's answer (a status, or the resource read at the end); more is a failed read. */
  pollMaxBytes: number;
  /** Bytes of documents one instance keeps of what it last wrote, so its next poll of one needs no read (see StateCache). */
  stateCacheBytes: number;
  /** How long a start's own two first writes may take (a few storage budgets): see orchestrationStarter.ts. */
  startWritesMs: number;
  /** How long a change of a held start (a decision) may take to land, its tries included: see HeldStarts.change. */
  changeWindowMs: number;
  /**
   * Tries of each write that records what the upstream answered a start, on a transient storage
   * failure (each within the storage budget): see orchestrationStarter.ts.
   */
  startRecordAttempts: number;
  /** Most orchestrations whose deliveries one sweep makes. */
  deliveryBatch: number;
  /** Most targets one orchestration tells of its end (a duplicate start may add its own). */
  maxNotifyTargets: number;
  outbox: OutboxPolicy;
  /** Per receiver's origin: attempts at once, and the circuit that skips one failing (src/notifications/originGate.ts). */
  originGate: { perOriginConcurrency: number; failuresToOpen: number; coolDownMs: number };
  /** How long a poller run waits for the deliveries it started; slower ones are recorded after it. */
  deliveryWaitMs: number;
  /** Told of every orchestration's end (`NOTIFY_URL`). */
  notifyUrl?: string;
  /** The origins `x-gateway-notify` may name (`NOTIFY_ALLOWED_ORIGINS`), checked again at every delivery. */
  allowedOrigins: readonly string[];
  /** Most orchestrations past their retention one sweep purges (ORCHESTRATION_PURGE_BATCH). */
  purgeBatch: number;
  /** Most expired records one sweep removes, and stale ones the janitor's turn removes (RECORDS_JANITOR_BATCH). */
  recordsBatch: number;
  /** The time a sweep may give purging and the janitor. */
  housekeepingBudgetMs: number;
  /** How often the janitor walks every document (ms), and how many it reads per sweep. */
  janitorIntervalMs: number;
  janitorPageSize: number;
}

/**
 * The engine's settings from the app's settings (src/settings/config.ts, where each has its one
 * default) and the engine's constant bounds (src/settings/limits.ts). `endOrigins`: origins the
 * ends of chat commands go to, allowed as end targets beside NOTIFY_ALLOWED_ORIGINS (x-gateway-notify
 * is checked against NOTIFY_ALLOWED_ORIGINS alone).
 */
export function orchestrationSettingsOf(settings: Settings, endOrigins: readonly string[] = []): OrchestrationSettings {
  const minutes = (value: number) => value * 60_000;
  return {
    pollInterval: {
      defaultMs: settings.LRO_DEFAULT_POLL_SECONDS * 1000,
      floorMs: settings.LRO_MIN_POLL_SECONDS * 1000,
      ceilingMs: settings.LRO_MAX_POLL_SECONDS * 1000,
    },
    deadlineMs: {
      ...engineLimits.documentedDeadlinesMs,
      ...Object.fromEntries(Object.entries(settings.LRO_DEADLINE_MINUTES).map(([name, value]) => [name, minutes(value)])),
    },
    defaultDeadlineMs: engineLimits.defaultDeadlineMs,
    claimMs: settings.ORCHESTRATION_CLAIM_SECONDS * 1000,
    retentionMs: settings.ORCHESTRATION_RETENTION_HOURS * 3600_000,
    // A start is judged interrupted only once it cannot still be live: its writes (each within the
    // storage budget: two before the upstream call, and the record of its answer with its tries)
    // and its upstream call (within its own) done, with a margin for clocks that differ between
    // instances; ORCHESTRATION_INTERRUPTED_AFTER_SECONDS can lengthen that, never shorten it.
    pendingTimeoutMs: Math.max(
      settings.ORCHESTRATION_INTERRUPTED_AFTER_SECONDS * 1000,
      settings.UPSTREAM_TIMEOUT_MS + (2 + settings.ORCHESTRATION_START_RECORD_ATTEMPTS) * settings.STORAGE_TIMEOUT_MS + engineLimits.clockSkewMarginMs,
    ),
    concurrency: engineLimits.concurrency,
    pollConcurrency: settings.ORCHESTRATION_POLL_CONCURRENCY,
    pollMaxBytes: settings.ORCHESTRATION_POLL_MAX_BYTES,
    stateCacheBytes: settings.ORCHESTRATION_CACHE_MB * 1024 * 1024,
    // Three storage budgets: set again by engineOnContainer from the storage budget it is given.
    startWritesMs: 3 * settings.STORAGE_TIMEOUT_MS,
    // A document write tries up to five times, each within the storage budget, after a read.
    changeWindowMs: 6 * settings.STORAGE_TIMEOUT_MS,
    startRecordAttempts: settings.ORCHESTRATION_START_RECORD_ATTEMPTS,
    deliveryBatch: engineLimits.deliveryBatch,
    maxNotifyTargets: engineLimits.maxNotifyTargets,
    outbox: { maxAttempts: settings.NOTIFY_MAX_ATTEMPTS, ...engineLimits.deliveryRetry },
    originGate: {
      perOriginConcurrency: settings.NOTIFY_ORIGIN_CONCURRENCY,
      failuresToOpen: settings.NOTIFY_CIRCUIT_FAILURES,
      coolDownMs: settings.NOTIFY_CIRCUIT_COOLDOWN_SECONDS * 1000,
    },
    deliveryWaitMs: settings.NOTIFY_RUN_WAIT_MS,
    notifyUrl: settings.NOTIFY_URL,
    allowedOrigins: [...settings.NOTIFY_ALLOWED_ORIGINS, ...endOrigins],
    purgeBatch: settings.ORCHESTRATION_PURGE_BATCH,
    recordsBatch: settings.RECORDS_JANITOR_BATCH,
    housekeepingBudgetMs: engineLimits.housekeepingBudgetMs,
    janitorIntervalMs: minutes(settings.ORCHESTRATION_JANITOR_MINUTES),
    janitorPageSize: engineLimits.janitorPageSize,
  };
}

/** The engine's settings with every app setting at its default. */
export const defaultOrchestrationSettings: OrchestrationSettings = orchestrationSettingsOf(defaultSettings);

export interface EngineDependencies {
  store: OrchestrationStore;
  index: OrchestrationIndex;
  upstream: UpstreamClient;
  /**
   * Who delivers the notifications of ended orchestrations (src/notifications: deliveriesOf),
   * built on the engine's own parts; absent, the ends are recorded and nobody is told.
   */
  deliveries?: (parts: DeliveryParts) => EndDeliveries;
  /** Records that expire in the same storage (chat replay records, post counts, share buckets): every run removes the expired ones. */
  expiringMarkers?: Expiring;
  /** Records the janitor removes on its turn once they are stale (the receivers' circuits, src/notifications). */
  staleRecords?: Expiring;
  settings: OrchestrationSettings;
  now: () => number;
  log: (line: string) => void;
  newId?: () => string;
  /** What decides the course of a held start (src/approvals: approvalHolds); absent, no start can be held. */
  holds?: HoldRules;
}

/** What the engine hands the deliveries of its ends: its storage, its conditional write, its settings. */
export interface DeliveryParts {
  store: OrchestrationStore;
  index: OrchestrationIndex;
  settings: OrchestrationSettings;
  now: () => number;
  log: (line: string) => void;
  /** The engine's conditional write: read, change and write again on a conflict. */
  write: (stored: StoredState, change: (state: OrchestrationState) => OrchestrationState) => Promise<StoredState>;
}

/** The deliveries of ended orchestrations' notifications, as the engine drives them. */
export interface EndDeliveries {
  /** One poller run's share: starts the due deliveries, waits for them at most `deliveryWaitMs`; how many it started. */
  run(housekeepingEndsAt: number): Promise<number>;
  /** Makes the due deliveries of one ended orchestration and waits for them. */
  deliver(id: string): Promise<number>;
  /** Resolves once no delivery this instance started is in flight. */
  idle(): Promise<void>;
}

/** A start held instead of sent (heldStarts.ts): nothing went upstream. */
export interface HeldOutcome {
  kind: 'waiting';
  state: OrchestrationState;
}

export interface StartRequest {
  name: string;
  method: string;
  /** The upstream path and its forwarded query. */
  path: string;
  query: [string, string][];
  bodyText?: string;
  bodyValue?: unknown;
  /** The resource URL (the request URL), for a PUT's final GET. */
  resourceUrl: string;
  /**
   * Who acts upstream when that is the caller (passthrough): see `actorOf`. Only the same
   * caller's repeat is a duplicate, or another caller would be handed an operation the
   * upstream never authorised them for.
   */
  actor?: string;
  /** The app's base URL as the caller reached it (links, notification source). */
  appBase?: string;
  /** Where to tell of the end (`x-gateway-notify`), already checked against the allow-list. */
  notifyTargets?: string[];
  /** Who started it (the caller's most specific name): with ACCESS_POLICY, only they and admins see it. */
  startedBy?: string;
  /** Whether only the same starter's repeat is a duplicate (with ACCESS_POLICY: each caller's own). */
  duplicatesPerCaller?: boolean;
  /** A restart: the id chosen for it beforehand (the original links to it first), and the original's. */
  id?: string;
  restartedFrom?: string;
}

/**
 * Who reads the upstream for a poll: the token to send, and in passthrough mode who it acts
 * for (see `actorOf`), since only the starter's own reads may drive its operation.
 */
export interface PollReader {
  token: string;
  actor?: string;
}

export type StartOutcome =
  | { kind: 'duplicate'; state: OrchestrationState }
  | { kind: 'final'; state: OrchestrationState; response: UpstreamResponse }
  | { kind: 'running'; state: OrchestrationState; response: UpstreamResponse };

export interface SweepResult {
  durationMs: number;
  due: number;
  polled: number;
  /** Delivery attempts the run started (those still in flight at its end are recorded after it). */
  delivered: number;
  purged: number;
  reconciled: number;
  /** Due work this run left to the next, as it reached the end of its time (see OrchestrationSweeper). */
  deferred: number;
  /** Documents the janitor looked at in this run (0 but for one run in many, see orchestrationJanitor.ts). */
  janitorScanned: number;
}

/** What a step does with a held start: end it, send it, or nothing yet. */
export type HeldStep = { kind: 'end'; ending: Ending } | { kind: 'send' } | { kind: 'wait' };

/** A change to a held start: its next version, or its end. */
export type HeldChange = { state: OrchestrationState } | { ending: Ending };

/** What decides a held start's course (heldStarts.ts); pure functions of its document and the time, but `release`. */
export interface HoldRules {
  /** What a step does with it at `now`. */
  stepOf(state: OrchestrationState, now: number): HeldStep;
  /** When the index brings it to the poller next, while it is held. */
  scheduleOf(state: OrchestrationState): KeySchedule | undefined;
  /** Whether it may be sent now and no instance claimed its send yet. */
  isDue(state: OrchestrationState): boolean;
  /** Gives back what it held (its place among the held starts) once it is due or ended. Idempotent. */
  release(state: OrchestrationState): Promise<void>;
}
