/** ACCESS_POLICY: who may call which operations and routes, in which scopes, whether an orchestration is theirs to see, and the callers' shares of the upstream held across instances. */
export { accessPolicyOf, matchesAny, normalizeSelector } from './accessPolicy';
export type { AccessPolicy, Action, ApprovalRequirement, Caller, Grant } from './accessPolicy';
export { CallerRateLimiter } from './callerRateLimiter';
export type { CallKind } from './callerRateLimiter';
export { IdleShareBuckets } from './shareBucketJanitor';
export { ShareBucketStore } from './shareBucketStore';
export { SharedCallerRates } from './sharedCallerRates';
export type { CallerRates, SharedCallerRatesOptions } from './sharedCallerRates';
export { WaitSlots } from './waitSlots';
