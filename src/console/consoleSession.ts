/**
 * What the console shows a caller before it acts: who the app takes it for, which actions
 * ACCESS_POLICY lets it take (the page shows no button for the others; the API refuses them
 * anyway), and the certificate environments it may read. Names and booleans only: no setting
 * value that could hold a secret.
 */
import { actionOf, appRoutes, type AppRoute } from '../routes';
import type { CallerIdentity } from '../callers';
import type { Services } from '../services';

function mayCall(services: Services, caller: CallerIdentity, route: AppRoute): boolean {
  return services.access.policy.allows(caller, actionOf(route));
}

export function consoleSession(services: Services, caller: CallerIdentity) {
  const { config } = services;
  const readsCertificates = mayCall(services, caller, appRoutes.certificatesGet);
  const admin = services.access.policy.adminGrant(caller);
  return {
    caller: caller.primary,
    /** Every orchestration (admin everywhere), some scopes' (admin in them), or only its own. */
    sees: admin ? (admin.scopes ? 'admin-scopes' : 'all') : 'own',
    may: {
      terminate: mayCall(services, caller, appRoutes.orchestrationsTerminate),
      purge: mayCall(services, caller, appRoutes.orchestrationsPurge),
      // The route only: each restart is then judged as a start of its operation.
      restart: mayCall(services, caller, appRoutes.orchestrationsRestart),
      terminateMany: mayCall(services, caller, appRoutes.orchestrationsTerminateMany),
      restartMany: mayCall(services, caller, appRoutes.orchestrationsRestartMany),
      refreshCertificates: mayCall(services, caller, appRoutes.certificatesRefresh),
      // Named as an approver by some rule: it reads and decides the starts it may approve (docs/approvals.md).
      approve: services.access.policy.namesApprover(caller),
    },
    /** How much the orchestrations view reads (CONSOLE_PAGE_SIZE, CONSOLE_HISTOGRAM_MAX_STARTS). */
    list: { pageSize: config.CONSOLE_PAGE_SIZE, histogramMaxStarts: config.CONSOLE_HISTOGRAM_MAX_STARTS },
    certificates: readsCertificates
      ? { alertDays: config.CERT_ALERT_DAYS, environments: config.CERT_ENVIRONMENTS.map(({ projectId, environmentId }) => ({ projectId, environmentId })) }
      : null,
  };
}
