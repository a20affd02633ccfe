/** A call of a documented operation checked and resolved (operationCall.ts), as the pipeline's stages hand it on. */
import type { CallerIdentity } from '../callers';
import type { OperationSpec } from '../spec';
import type { CallTrace } from '../telemetry';
import type { UpstreamClient } from '../upstream';
import type { ShareDraw } from './authorization';
import type { ValidatedCall } from './operationRequest';

export interface PreparedCall {
  operation: OperationSpec;
  call: ValidatedCall;
  targetPath: string;
  url: string;
  headers: Record<string, string>;
  token: string;
  client: UpstreamClient;
  correlationId: string;
  /** Bounds of a merge of pages; the deadline is the call's time budget from its start. */
  limits: { deadlineAt: number; maxItems: number; maxBytes: number };
  /** Where to tell of a long-running operation's end. */
  notifyTargets?: string[];
  caller: CallerIdentity;
  /** The call's draw on the caller's share (ACCESS_POLICY): spent by `sendPrepared`, else given back. */
  draw: ShareDraw;
  /** Takes one more upstream read from the caller's share (ACCESS_POLICY), or throws 429. */
  takeRead: () => Promise<void>;
  callTrace?: CallTrace;
}
