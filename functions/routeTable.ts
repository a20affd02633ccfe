/**
 * The one table of the app's HTTP functions: every documented operation (operations.ts), and
 * every route the app declares (src/routes) paired with its handler. functions/index.ts
 * registers each entry; a declared route without a handler does not compile.
 */
import type { HttpHandler } from '@azure/functions';
import { getServices } from '../src/app';
import { chatPlatforms } from '../src/chatops';
import { appRoutes, registrationOf } from '../src/routes';
import { decideApprovalRoute, listApprovalsRoute } from './approvals';
import { getCertificate, refreshCertificates } from './certificates';
import { getConsoleAsset, getConsolePage, getConsoleSession } from './console';
import { getHealth, getOpenApi } from './health';
import { operationRoutes } from './operations';
import {
  countOrchestrations,
  getOperation,
  getOrchestration,
  listOrchestrations,
  purgeOrchestration,
  purgeOrchestrations,
  restartOrchestrationRoute,
  restartOrchestrations,
  terminateOrchestration,
  terminateOrchestrations,
} from './orchestrations';
import type { RouteEntry } from './routeEntry';
import { buildGatewayProperties, validateApis, validateGalleryImageVersions, validateGatewayProperties } from './templates';

export type { RouteEntry } from './routeEntry';

/** A chat platform's route: its handler is the platform's own (src/chatops/<platform>/). */
function chatHandler(name: string): HttpHandler {
  const found = chatPlatforms.flatMap((platform) => platform.routes).find(({ route }) => route.name === name);
  if (!found) throw new Error(`No chat platform declares the route ${name}.`);
  return found.handler(getServices);
}

const handlers: { [Name in keyof typeof appRoutes]: HttpHandler } = {
  orchestrationsGet: getOrchestration,
  orchestrationsList: listOrchestrations,
  orchestrationsPurge: purgeOrchestration,
  orchestrationsPurgeMany: purgeOrchestrations,
  orchestrationsTerminate: terminateOrchestration,
  orchestrationsRestart: restartOrchestrationRoute,
  orchestrationsTerminateMany: terminateOrchestrations,
  orchestrationsRestartMany: restartOrchestrations,
  orchestrationsCounts: countOrchestrations,
  operationsGet: getOperation,
  certificatesRefresh: refreshCertificates,
  certificatesGet: getCertificate,
  validateGalleryImageVersions,
  validateApis,
  buildGatewayProperties,
  validateGatewayProperties,
  chatopsSlack: chatHandler(appRoutes.chatopsSlack.name),
  chatopsSlackInteractive: chatHandler(appRoutes.chatopsSlackInteractive.name),
  chatopsTeams: chatHandler(appRoutes.chatopsTeams.name),
  approvalsDecide: decideApprovalRoute,
  approvalsList: listApprovalsRoute,
  health: getHealth,
  consolePage: getConsolePage,
  consoleAsset: getConsoleAsset,
  consoleSession: getConsoleSession,
  openApi: getOpenApi,
};

export const routeTable: RouteEntry[] = [
  ...operationRoutes,
  ...(Object.keys(handlers) as (keyof typeof appRoutes)[]).map((key) => ({
    name: appRoutes[key].name,
    ...registrationOf(appRoutes[key]),
    handler: handlers[key],
  })),
];
