/**
 * The bounds that are constants rather than settings, in one place: each is here because no
 * deployment has a reason to change it (a protocol's own limit, a margin for clocks that differ)
 * or because changing it alone would break another bound; docs/settings.md says why a bound a
 * user might look for is not a setting. Every other bound is a setting (config.ts), with its
 * default there and only there.
 */

const second = 1000;
const minute = 60 * second;

/** The orchestration engine's (src/orchestration). */
export const engineLimits = {
  /** What the engine allows for clocks that differ between instances, beyond a start's own writes and upstream call, before it judges a start interrupted. */
  clockSkewMarginMs: minute,
  /** Deliveries in flight at once in one instance, and purges and janitor checks at once in one run. */
  concurrency: 8,
  /** Most orchestrations whose deliveries one sweep makes. */
  deliveryBatch: 100,
  /** Most targets one orchestration tells of its end (a duplicate start may add its own). */
  maxNotifyTargets: 10,
  /** A failed delivery's first retry, the longest back-off, and how long one instance holds an attempt. */
  deliveryRetry: { firstRetryMs: 5 * second, maxRetryMs: 10 * minute, claimMs: minute },
  /** The time a sweep may give purging and the janitor. */
  housekeepingBudgetMs: 5 * second,
  /** Documents the janitor reads per sweep. */
  janitorPageSize: 500,
  /** How long an operation may run when LRO_DEADLINE_MINUTES names none for it, and the documented ones (the migration: up to four hours). */
  defaultDeadlineMs: 60 * minute,
  documentedDeadlinesMs: { ApiManagementService_MigrateToStv2: 240 * minute } as Record<string, number>,
} as const;
