/**
 * The commands on orchestrations (`status`, `wait`, `terminate`, `list`), with the same rights as
 * the app's routes: a caller reads and waits on its own orchestrations (or, with `admin`, those
 * in its scopes), lists with the list route's rule and terminates with the terminate route's.
 * Another caller's orchestration answers as one that does not exist.
 */
import { actionOf, appRoutes, type AppRoute } from '../routes';
import { GatewayError } from '../errors';
import { grantFor, visibleFilter } from '../calls';
import { visibleOrchestration, visibleStatus, type Viewer } from '../calls';
import { waitForEnd } from '../calls';
import { isActive, type OrchestrationState } from '../orchestration';
import { operationFacts, type ChatReply } from './chatMessages';
import type { ChatCall } from './chatCall';
import type { ChatCommand, ListedStatus } from './commandGrammar';
import { withApproval } from './approvalReplies';

/** Most orchestrations a `list` answer shows: a phone screen's worth. */
const listedAtMost = 10;

/**
 * The caller of a command on one orchestration, checked with the rules of the route doing the
 * same (status by default): an approver reads a request it is named for, and terminates nothing
 * through that.
 */
function viewerOf(call: ChatCall, route: AppRoute = appRoutes.orchestrationsGet): Viewer {
  const { services, caller } = call;
  return {
    services,
    caller,
    starterOnly: !services.access.policy.allows(caller, actionOf(route)),
    routeName: route.name,
    notFound: (id) => new GatewayError('NotFound', `No operation ${id} that you may see.`),
  };
}

export function stateReply(state: OrchestrationState, note?: string): ChatReply {
  const facts = operationFacts({ ...state, upstreamStatus: state.output?.status });
  return { title: `Operation ${state.id}`, facts, lines: note ? [note] : [] };
}

export async function runOrchestrationCommand(
  call: ChatCall,
  command: Extract<ChatCommand, { kind: 'status' | 'wait' | 'terminate' | 'list' }>,
): Promise<ChatReply> {
  const { services, caller } = call;
  switch (command.kind) {
    case 'status': {
      const state = await visibleOrchestration(viewerOf(call), command.id);
      return withApproval(stateReply(state), state, call.appBase);
    }
    case 'wait': {
      // Let in from the status's metadata (a HEAD), as the wait route is: never the input.
      const viewer = viewerOf(call);
      const firstLook = await visibleStatus(viewer, command.id);
      // Held only as long as the platform waits for an answer; the rest is `wait` again.
      const state = await waitForEnd(services, command.id, { untilMs: call.answerBy, firstLook });
      // None only when the document is gone (purged meanwhile): as one that does not exist.
      if (!state) throw viewer.notFound(command.id);
      return withApproval(
        stateReply(state, isActive(state) ? `Still running: \`wait ${state.id}\` or \`status ${state.id}\` asks again.` : undefined),
        state,
        call.appBase,
      );
    }
    case 'terminate': {
      grantFor(services, caller, actionOf(appRoutes.orchestrationsTerminate));
      await visibleOrchestration(viewerOf(call, appRoutes.orchestrationsTerminate), command.id);
      const state = await services.orchestrations.terminate(command.id, `Terminated from chat by ${caller.primary}.`);
      return stateReply(state, 'Terminated: the app no longer follows it (the upstream operation itself goes on).');
    }
    case 'list':
      return listReply(call, command.runtimeStatus, command.sinceHours);
  }
}

async function listReply(call: ChatCall, runtimeStatus: ListedStatus | undefined, sinceHours: number | undefined): Promise<ChatReply> {
  const { services, caller } = call;
  grantFor(services, caller, actionOf(appRoutes.orchestrationsList));
  const statuses = runtimeStatus === 'Running' ? (['Pending', 'Running'] as const) : runtimeStatus ? [runtimeStatus] : undefined;
  const createdFrom = sinceHours === undefined ? undefined : new Date(services.now() - sinceHours * 3600_000).toISOString();
  const page = await services.orchestrations.query({
    ...visibleFilter(services, caller, { statuses, createdFrom }),
    top: listedAtMost,
    maxScanned: 10_000,
    timeBudgetMs: Math.max(100, call.answerBy - services.now()),
  });
  const lines = page.summaries.map((summary) => `\`${summary.id}\` ${summary.name} — ${summary.runtimeStatus} (${summary.createdTime})`);
  return {
    title: page.summaries.length === 0 ? 'No operations match.' : `${page.summaries.length} operation${page.summaries.length === 1 ? '' : 's'}`,
    lines: page.continuationToken ? [...lines, `More match: narrow it with a status or \`since\`.`] : lines,
  };
}
