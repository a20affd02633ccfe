/**
 * Whether a caller may see one orchestration, checked the same way by every route and chat
 * command that names one: its own, or any in a scope where it has `admin` (ACCESS_POLICY).
 * Another caller's answers as one that does not exist, so ids reveal nothing. A caller that
 * reaches the route only as a starter is refused anything but its own (403), whether or not the
 * id exists, as a caller without the route's rule always was.
 */
import { matchesAny } from '../access';
import { appRoutes } from '../routes';
import { GatewayError } from '../errors';
import type { OrchestrationState } from '../orchestration';
import type { StoredStatus } from '../orchestration';
import type { Services } from '../services';
import type { CallerIdentity } from '../callers';
import { notAllowed } from './authorization';

export interface Viewer {
  services: Services;
  caller: CallerIdentity;
  /** The caller reaches the route only because a start grants following it. */
  starterOnly: boolean;
  /** The route or command, named in a refusal. */
  routeName: string;
  /** The answer for an orchestration that does not exist or that the caller may not see. */
  notFound: (id: string) => GatewayError;
}

/**
 * Whether the caller reads a start it is named to approve (its `customStatus.approval`): an
 * approver may read and decide those, on the routes that read, and nothing else through that.
 */
function readsAsApprover(viewer: Viewer, state: OrchestrationState | undefined): boolean {
  const approvers = state?.customStatus?.approval?.approvers;
  return approvers !== undefined && readingRoutes.has(viewer.routeName) && matchesAny(viewer.caller, approvers);
}

const readingRoutes: ReadonlySet<string> = new Set(
  Object.values(appRoutes)
    .filter((route) => route.access === 'read')
    .map((route) => route.name),
);

/** The orchestration's document, if the caller may see it. */
export async function visibleOrchestration(viewer: Viewer, id: string): Promise<OrchestrationState> {
  const { services, caller } = viewer;
  const state = await services.orchestrations.get(id);
  if (readsAsApprover(viewer, state)) return state!;
  if (viewer.starterOnly && state?.startedBy !== caller.primary) throw notAllowed(caller, { names: [viewer.routeName] });
  if (!state || !services.access.policy.maySee(caller, { startedBy: state.startedBy, target: state.input.path })) throw viewer.notFound(id);
  return state;
}

/**
 * The same check from the blob's metadata (a HEAD), for a waiter: who started it and its target
 * are kept there, so a wait never downloads the input (which may be megabytes) to be let in. A
 * target too long for metadata is checked from the document instead. Answers the status read,
 * which the wait's watch takes as its first look.
 */
export async function visibleStatus(viewer: Viewer, id: string): Promise<StoredStatus> {
  const { services, caller } = viewer;
  const status = await services.orchestrations.store.readStatus(id);
  // An approver's rights are in the document, not in its metadata: read from there.
  if (status && status.startedBy !== caller.primary && services.access.policy.namesApprover(caller) && !services.access.policy.maySee(caller, status)) {
    await visibleOrchestration(viewer, id);
    return status;
  }
  if (viewer.starterOnly && status?.startedBy !== caller.primary) throw notAllowed(caller, { names: [viewer.routeName] });
  if (status && status.startedBy !== caller.primary && status.target === undefined) {
    await visibleOrchestration(viewer, id);
    return status;
  }
  if (!status || !services.access.policy.maySee(caller, status)) throw viewer.notFound(id);
  return status;
}
