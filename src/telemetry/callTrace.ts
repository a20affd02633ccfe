/** What the hooks (hooks.ts) and the SDK's spans (spans.ts) both speak of: an incoming call's trace, and the facts of one upstream attempt. */

/** An incoming call's trace, as the SDK's file keeps it: nothing outside it looks inside. */
export type CallTrace = object;

export interface AttemptFacts {
  method: string;
  origin: string;
  path: string;
  /** 0 for the first attempt. */
  attempt: number;
  /** How long the client waited before this attempt (its back-off). */
  waitedMs: number;
  /** The incoming call's trace, when handed on by hand (else the async context's is the parent). */
  callTrace?: CallTrace;
}
