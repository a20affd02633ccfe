/**
 * The durable-style engine of the long-running calls: it starts an operation upstream once per
 * request key, advances it one claimed poll at a time until a terminal state or its deadline,
 * tells the targets named of its end, and purges it after the retention. Every step is a read,
 * a conditional write, and at most one upstream call, so any instance can take the next step
 * and a crashed one loses nothing.
 *
 * This is the wiring and the face callers use; each concern is a part of its own: starting
 * (orchestrationStarter.ts), one step (orchestrationStepper.ts), the poller's run
 * (orchestrationSweeper.ts), the janitor (orchestrationJanitor.ts), writing and ending a
 * document (orchestrationRecords.ts), deliveries (notificationDispatcher.ts), beside the pure
 * rules they apply (lroRules.ts, transitions.ts, outbox.ts) and the storage they use
 * (orchestrationStore.ts, orchestrationIndex.ts).
 */
import { randomUUID } from 'node:crypto';
import type { ContainerClient } from '@azure/storage-blob';
import { GatewayError } from '../errors';
import { StorageBudget } from '../storage';
import type { UpstreamResponse } from '../upstream';
import { mapConcurrently } from '../concurrency';
import type { EndDeliveries, EngineDependencies, HeldChange, HeldOutcome, PollReader, StartOutcome, StartRequest, SweepResult } from './engineSettings';
import { OrchestrationIndex } from './orchestrationIndex';
import { OrchestrationJanitor } from './orchestrationJanitor';
import { OrchestrationRecords } from './orchestrationRecords';
import { isActive, type OrchestrationState } from './orchestrationState';
import { OrchestrationStarter, requestKeyOf } from './orchestrationStarter';
import { OrchestrationStepper } from './orchestrationStepper';
import { OrchestrationStore } from './orchestrationStore';
import type { SummaryFilter, SummaryPage, SummaryQuery } from './summaryQuery';
import { OrchestrationSweeper } from './orchestrationSweeper';
import { HeldStarts } from './heldStarts';
import { StartRecorder } from './startAnswers';
import { nextDeliveryAt } from './outbox';

export { defaultOrchestrationSettings } from './engineSettings';
export type {
  DeliveryParts,
  EndDeliveries,
  EngineDependencies,
  HeldChange,
  HeldOutcome,
  HeldStep,
  HoldRules,
  OrchestrationSettings,
  PollReader,
  StartOutcome,
  StartRequest,
  SweepResult,
} from './engineSettings';
export { requestKeyOf } from './orchestrationStarter';

/** Where nobody is told of ends (no `deliveries`): nothing to run or wait for. */
const noDeliveries: EndDeliveries = { run: async () => 0, deliver: async () => 0, idle: async () => undefined };

/** Durable Functions' answer to terminating an instance that already ended: 410 Gone. */
function alreadyEnded(state: OrchestrationState): GatewayError {
  return new GatewayError(
    'OrchestrationEnded',
    `Orchestration ${state.id} already ended (${state.runtimeStatus}${state.endedTime ? ` at ${state.endedTime}` : ''}): there is nothing to terminate. Read its outcome with GET orchestrations/${state.id}.`,
    { target: 'id' },
  );
}

export class OrchestrationEngine {
  readonly #deps: EngineDependencies;
  readonly #records: OrchestrationRecords;
  readonly #starter: OrchestrationStarter;
  readonly #held: HeldStarts;
  readonly #stepper: OrchestrationStepper;
  readonly #sweeper: OrchestrationSweeper;
  readonly #notifications: EndDeliveries;

  constructor(deps: EngineDependencies) {
    this.#deps = deps;
    const newId = deps.newId ?? randomUUID;
    this.#records = new OrchestrationRecords({ ...deps, newId });
    const recorder = new StartRecorder(deps, this.#records);
    this.#starter = new OrchestrationStarter({ ...deps, newId }, this.#records, recorder);
    this.#held = new HeldStarts(deps, this.#records, recorder);
    this.#stepper = new OrchestrationStepper(deps, this.#records, this.#held);
    this.#notifications = deps.deliveries?.({ ...deps, write: (stored, change) => this.#records.write(stored, change) }) ?? noDeliveries;
    const janitor = new OrchestrationJanitor(deps, this.#records);
    this.#sweeper = new OrchestrationSweeper(deps, { records: this.#records, stepper: this.#stepper, notifications: this.#notifications, janitor });
  }

  get store(): OrchestrationStore {
    return this.#deps.store;
  }

  /** See OrchestrationStarter.start. */
  start(request: StartRequest, send: (pending: OrchestrationState) => Promise<UpstreamResponse>): Promise<StartOutcome> {
    return this.#starter.start(request, send);
  }

  /** Stores a start held instead of sent (see OrchestrationStarter.hold); its rules (`holds`) say when it is sent or ended. */
  hold(
    request: StartRequest,
    held: NonNullable<OrchestrationState['heldStart']>,
    customStatus: NonNullable<OrchestrationState['customStatus']>,
    logged: Record<string, unknown> = {},
  ): Promise<StartOutcome | HeldOutcome> {
    return this.#starter.hold(request, held, customStatus, logged);
  }

  /** Changes a held start (see HeldStarts.change): a decision on it, say. */
  changeHeld(id: string, change: (state: OrchestrationState, now: number) => HeldChange): Promise<OrchestrationState> {
    return this.#held.change(id, change);
  }

  /** The active start holding the same request key, started by the same caller, if there is one: what a repeat of a start joins. */
  async activeRepeatOf(request: StartRequest): Promise<OrchestrationState | undefined> {
    const holder = await this.#deps.index.keyHolder(requestKeyOf(request));
    const state = holder && (await this.#deps.store.read(holder.id))?.state;
    return state && isActive(state) && state.startedBy === request.startedBy ? state : undefined;
  }

  /** A new orchestration id, as a start without one is given. */
  newId(): string {
    return (this.#deps.newId ?? randomUUID)();
  }

  /** See OrchestrationStepper.advance. */
  advance(id: string, reader?: PollReader, budgetEndsAt?: number): Promise<boolean> {
    return this.#stepper.advance(id, reader, budgetEndsAt);
  }

  /** See OrchestrationSweeper.sweep. */
  sweep(token: string | undefined, lookaheadMs = 0, runBudgetMs?: number): Promise<SweepResult> {
    return this.#sweeper.sweep(token, lookaheadMs, runBudgetMs);
  }

  /** Makes the due deliveries of one ended orchestration and waits for them (see NotificationDispatcher). */
  deliver(id: string): Promise<number> {
    return this.#notifications.deliver(id);
  }

  /** Resolves once no delivery this instance started is in flight. */
  deliveriesSettled(): Promise<void> {
    return this.#notifications.idle();
  }

  // ---- Reading, terminating, purging --------------------------------------------------

  async get(id: string): Promise<OrchestrationState | undefined> {
    return (await this.#deps.store.read(id))?.state;
  }

  /** One bounded page of summaries (see OrchestrationStore.query). */
  query(query: SummaryQuery): Promise<SummaryPage> {
    return this.#deps.store.query(query, this.#deps.now);
  }

  async terminate(id: string, reason: string): Promise<OrchestrationState> {
    const stored = await this.#deps.store.read(id);
    if (!stored) throw new GatewayError('NotFound', `No orchestration ${id}.`);
    if (!isActive(stored.state)) throw alreadyEnded(stored.state);
    const message = reason.slice(0, 500);
    const state = await this.#records.end(stored, { runtimeStatus: 'Terminated', failure: { code: 'Terminated', message } });
    // It may have ended another way between the read and the write: then this call changed nothing.
    if (state.runtimeStatus !== 'Terminated' || state.failure?.message !== message) throw alreadyEnded(state);
    return state;
  }

  /**
   * Removes an ended orchestration and everything the index holds of it; not while it runs,
   * nor while a notification of its end is still to be delivered (at least once means that).
   */
  async purge(id: string): Promise<'purged' | 'running' | 'notifying' | 'missing'> {
    const stored = await this.#deps.store.read(id);
    if (!stored) return 'missing';
    if (isActive(stored.state)) return 'running';
    if (nextDeliveryAt(stored.state.deliveries) !== undefined) return 'notifying';
    await this.#records.purgeEnded(stored.state);
    return 'purged';
  }

  /**
   * Purges the ended orchestrations matching `filter`, within the bounds of one query (see
   * OrchestrationStore.query); the continuation token, when set, reads on to purge more.
   */
  async purgeMatching(
    filter: SummaryFilter,
    bounds: Omit<SummaryQuery, keyof SummaryFilter>,
  ): Promise<{ instancesDeleted: number; continuationToken?: string }> {
    const endedStatuses = ['Completed', 'Failed', 'Terminated'] as const;
    const statuses = (filter.statuses ?? endedStatuses).filter((status) => (endedStatuses as readonly string[]).includes(status));
    const page = await this.query({ ...filter, ...bounds, statuses });
    let instancesDeleted = 0;
    const deliveredAll = page.summaries.filter((summary) => summary.nextDeliveryAt === undefined);
    await mapConcurrently(deliveredAll, this.#deps.settings.concurrency, async (summary) => {
      if ((await this.purge(summary.id)) === 'purged') instancesDeleted += 1;
    });
    return { instancesDeleted, continuationToken: page.continuationToken };
  }
}

/** An engine whose documents and index live in one blob container, under one storage budget. */
export function engineOnContainer(
  container: ContainerClient,
  dependencies: Omit<EngineDependencies, 'store' | 'index'> & { storageTimeoutMs: number },
): OrchestrationEngine {
  const budget = new StorageBudget(dependencies.storageTimeoutMs, 'Orchestration storage');
  const settings = { ...dependencies.settings, startWritesMs: 3 * dependencies.storageTimeoutMs, changeWindowMs: 6 * dependencies.storageTimeoutMs };
  return new OrchestrationEngine({
    ...dependencies,
    settings,
    store: new OrchestrationStore(container, budget),
    index: new OrchestrationIndex(container, budget),
  });
}
