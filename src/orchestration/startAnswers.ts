/**
 * Recording what the upstream answered a start, whoever sent it: the starter at once, or the
 * step that sends a start once it is approved. The answer is recorded before anyone hears of it
 * (so the poll URL is durable before "accepted"), each write tried again on a transient storage
 * failure, since the upstream has acted.
 */
import { GatewayError } from '../errors';
import { redactSecrets } from '../rules';
import { withStorageAttempts } from '../storage';
import { upstreamIdsOf } from '../telemetry';
import { isTrustedUrl } from '../upstream';
import type { UpstreamResponse } from '../upstream';
import type { EngineDependencies, StartOutcome } from './engineSettings';
import { isUnfollowableAccept, pollingModeOf, pollUrlOf, resultUrlOf, type UpstreamAnswer } from './lroRules';
import type { OrchestrationRecords } from './orchestrationRecords';
import type { OrchestrationState } from './orchestrationState';
import type { StoredState } from './orchestrationStore';
import { running, scheduleOf, type Ending } from './transitions';
import { answerOf } from './upstreamAnswer';

/** What of the start the recording needs: its operation, method and resource URL (a PUT's final GET). */
export interface SentStart {
  name: string;
  method: string;
  resourceUrl: string;
}

export class StartRecorder {
  constructor(
    private readonly deps: Pick<EngineDependencies, 'index' | 'upstream' | 'settings' | 'now'>,
    private readonly records: OrchestrationRecords,
  ) {}

  /**
   * Sends through `send` and records the answer: the start Running with its poll, or ended with
   * the upstream's final answer or the failure. A send that throws ends the start Failed and
   * throws on. The answer is read in the same try as the call: whatever fails there, the start
   * is recorded as failed, never left Pending with the upstream having acted.
   */
  async sendAndRecord(
    stored: StoredState,
    start: SentStart,
    send: () => Promise<UpstreamResponse>,
    keyEtag: string | undefined,
  ): Promise<Exclude<StartOutcome, { kind: 'duplicate' }>> {
    let response: UpstreamResponse;
    let answer: UpstreamAnswer;
    let initial: NonNullable<OrchestrationState['initial']>;
    try {
      response = await send();
      answer = answerOf(response);
      initial = { status: response.status, body: redactSecrets(answer.body), upstreamIds: upstreamIdsOf(response.headers) };
    } catch (error) {
      const failure = error instanceof GatewayError ? { code: error.code, message: error.message } : { code: 'InternalError', message: 'The start failed.' };
      await this.#end(stored, { runtimeStatus: 'Failed', failure }, keyEtag);
      throw error;
    }
    return this.#recordAnswer(stored, start, response, answer, initial, keyEtag);
  }

  async #recordAnswer(
    stored: StoredState,
    start: SentStart,
    response: UpstreamResponse,
    answer: UpstreamAnswer,
    initial: NonNullable<OrchestrationState['initial']>,
    keyEtag: string | undefined,
  ): Promise<Exclude<StartOutcome, { kind: 'duplicate' }>> {
    const { id } = stored.state;
    const now = this.deps.now();
    if (isUnfollowableAccept(start.method, answer)) {
      const failure = {
        code: 'UpstreamBadResponse',
        message: 'The upstream accepted the operation (202) without a Location or Azure-AsyncOperation to follow it; its outcome cannot be known.',
      } as const;
      await this.#end(stored, { runtimeStatus: 'Failed', initial, failure }, keyEtag);
      throw new GatewayError(failure.code, failure.message, { headers: { 'x-orchestration-id': id } });
    }
    let mode = pollingModeOf(start.method, answer);
    let pollUrl = mode && pollUrlOf(mode, answer, start.resourceUrl);
    if (mode && pollUrl && !isTrustedUrl(pollUrl, this.deps.upstream.baseUrl) && start.method.toUpperCase() === 'PUT') {
      // A PUT can still be followed on the resource itself, which is on our own upstream.
      mode = 'resource';
      pollUrl = start.resourceUrl;
    }
    if (!mode || !pollUrl) {
      const succeeded = response.status < 400;
      const state = await this.#end(
        stored,
        {
          runtimeStatus: succeeded ? 'Completed' : 'Failed',
          initial,
          output: initial,
          customStatus: { upstreamState: succeeded ? 'Succeeded' : 'Failed', lastReadStatus: response.status },
        },
        keyEtag,
      );
      return { kind: 'final', state, response };
    }
    if (!isTrustedUrl(pollUrl, this.deps.upstream.baseUrl)) {
      const failure = { code: 'UpstreamLinkRefused', message: 'The upstream asked to be polled on another origin; the app does not follow it.' };
      return { kind: 'running', state: await this.#end(stored, { runtimeStatus: 'Failed', initial, failure }, keyEtag), response };
    }
    // A result on another origin is not read: the status body is then the output, as before.
    const resultUrl = resultUrlOf(start.method, mode, answer);
    const plan = {
      mode,
      url: pollUrl,
      resourceUrl: start.resourceUrl,
      resultUrl: resultUrl && isTrustedUrl(resultUrl, this.deps.upstream.baseUrl) ? resultUrl : undefined,
      retryAfter: response.headers['retry-after'],
      deadlineMs: this.deps.settings.deadlineMs[start.name] ?? this.deps.settings.defaultDeadlineMs,
    };
    const started = running(stored.state, plan, initial, this.deps.now(), this.deps.settings.pollInterval);
    // A try whose answer was lost may have landed: the next finds the document Running with
    // this answer already (only this start moves it from Pending) and leaves it as it is.
    const toRunning = (state: OrchestrationState) =>
      state.runtimeStatus === 'Running' && state.initial ? state : running(state, plan, initial, this.deps.now(), this.deps.settings.pollInterval);
    const [recorded] = await Promise.all([
      this.#recorded(() => this.records.write(stored, toRunning)),
      this.#recorded(() => this.deps.index.scheduleKey(stored.state.requestKey, id, scheduleOf(started), keyEtag)),
    ]);
    this.records.log({ id, name: start.name, step: 'started', mode, nextPollInMs: (recorded.state.poll?.nextPollAt ?? now) - now });
    return { kind: 'running', state: recorded.state, response };
  }

  /** Ends the start's orchestration with what the upstream answered, tried again as any record of it. */
  #end(stored: StoredState, ending: Ending, keyEtag: string | undefined): Promise<OrchestrationState> {
    return this.#recorded(() => this.records.end(stored, ending, keyEtag));
  }

  /**
   * A write of what the upstream answered, tried again on a transient storage failure
   * (`startRecordAttempts` in all, each within the storage budget): the upstream has acted, so
   * a lost write would answer the caller 503 while the operation runs, and leave the document
   * Pending for the janitor to fail as `StartInterrupted`. Every such write is safe to repeat:
   * conditioned on the document's ETag and idempotent (an ending, or the change to Running,
   * leaves a document that has it already as it is; the key's schedule re-reads the key).
   */
  #recorded<T>(write: () => Promise<T>): Promise<T> {
    return withStorageAttempts(this.deps.settings.startRecordAttempts, write);
  }
}
