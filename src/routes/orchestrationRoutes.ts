/**
 * The orchestration routes, with Durable Functions' names: status, list, purge, terminate,
 * restart, the bulk terminate and restart, counts, and the upstream-style `operations/{id}`
 * (functions/orchestrations.ts registers them).
 */
import { z } from 'zod';
import { appRoute, tooManyWaits, type AppRoute } from './routeKit';

export const orchestrationRoutes = {
  orchestrationsGet: appRoute(
    {
      name: 'orchestrations-get',
      method: 'GET',
      route: 'orchestrations/{id}',
      authLevel: 'function',
      access: 'read',
      openToStarter: true,
      tag: 'orchestrations',
      summary: 'Status document of an orchestration (202 with Retry-After while it runs)',
    },
    ({ orchestrationId, statusDocument, waitQuery }) => ({
      params: orchestrationId,
      query: waitQuery,
      responses: { 200: { description: 'Finished', schema: statusDocument }, 202: { description: 'Still running', schema: statusDocument }, 429: tooManyWaits },
    }),
  ),
  orchestrationsList: appRoute(
    {
      name: 'orchestrations-list',
      method: 'GET',
      route: 'orchestrations',
      authLevel: 'function',
      access: 'read',
      tag: 'orchestrations',
      summary: 'A page of orchestrations (no input or output unless showInput=true), filtered; x-ms-continuation-token reads on',
    },
    ({ listEntry, purgeFilter }) => ({
      query: purgeFilter.extend({
        top: z
          .string()
          .regex(/^[1-9][0-9]*$/)
          .optional()
          .describe('Most entries answered: 1 to 1000, default 100'),
        showInput: z
          .enum(['true', 'false'])
          .optional()
          .describe(
            'Include each input; the answer ends where the documents read for them would pass ORCHESTRATION_LIST_INPUT_BYTES (at least one entry), and the continuation token reads on',
          ),
      }),
      responses: {
        200: {
          description: 'The orchestrations in id order; the x-ms-continuation-token header, when present, reads on (send it back as a request header)',
          schema: z.object({ value: z.array(listEntry) }),
        },
      },
    }),
  ),
  orchestrationsPurge: appRoute(
    {
      name: 'orchestrations-purge',
      method: 'DELETE',
      route: 'orchestrations/{id}',
      authLevel: 'function',
      access: 'write',
      tag: 'orchestrations',
      summary: 'Purge an ended orchestration (409 while it runs)',
    },
    ({ orchestrationId, purgeResult }) => ({
      params: orchestrationId,
      responses: {
        200: { description: 'Purged', schema: purgeResult },
        404: { description: 'No such orchestration' },
        409: { description: 'Still running (OrchestrationRunning)' },
      },
    }),
  ),
  orchestrationsPurgeMany: appRoute(
    {
      name: 'orchestrations-purge-many',
      method: 'DELETE',
      route: 'orchestrations',
      authLevel: 'function',
      access: 'write',
      tag: 'orchestrations',
      summary: 'Purge the ended orchestrations matching a filter (at least one filter; a bounded batch per request, x-ms-continuation-token goes on)',
    },
    ({ purgeResult, purgeFilter }) => ({
      query: purgeFilter,
      responses: { 200: { description: 'How many were purged; x-ms-continuation-token, when present, purges on', schema: purgeResult } },
    }),
  ),
  orchestrationsTerminate: appRoute(
    {
      name: 'orchestrations-terminate',
      method: 'POST',
      route: 'orchestrations/{id}/terminate',
      authLevel: 'function',
      access: 'write',
      tag: 'orchestrations',
      summary: 'Stop tracking an orchestration',
    },
    ({ orchestrationId, statusDocument }) => ({
      params: orchestrationId,
      query: z.object({ reason: z.string().optional() }),
      responses: {
        202: { description: 'Terminated', schema: statusDocument },
        410: { description: 'Already ended (OrchestrationEnded): nothing to terminate' },
      },
    }),
  ),
  orchestrationsRestart: appRoute(
    {
      name: 'orchestrations-restart',
      method: 'POST',
      route: 'orchestrations/{id}/restart',
      authLevel: 'function',
      access: 'write',
      tag: 'orchestrations',
      summary: "Start an ended orchestration's request again as a new orchestration, under the caller's rights as they are now; answered as a start is",
    },
    ({ orchestrationId, waitQuery }) => ({
      params: orchestrationId,
      query: waitQuery,
      responses: {
        201: { description: 'Started, as the operation answers a start: Location, Retry-After, and the new id in x-orchestration-id' },
        202: { description: 'Started (as above)' },
        409: {
          description:
            'Still running (OrchestrationRunning); restarted already, or its request held secrets that are never stored (Conflict): send the request again',
        },
      },
    }),
  ),
  orchestrationsTerminateMany: appRoute(
    {
      name: 'orchestrations-terminate-many',
      method: 'POST',
      route: 'orchestrations/terminate',
      authLevel: 'function',
      access: 'write',
      tag: 'orchestrations',
      summary:
        'Terminate the running orchestrations matching a filter that the caller may act on (at least one filter; ORCHESTRATION_BULK_BATCH per request, x-ms-continuation-token goes on; dryRun=true only counts)',
    },
    ({ bulkFilter, bulkResult }) => ({
      query: bulkFilter.extend({ reason: z.string().optional() }),
      responses: { 200: { description: 'What would be, or was, terminated; x-ms-continuation-token, when present, goes on', schema: bulkResult } },
    }),
  ),
  orchestrationsRestartMany: appRoute(
    {
      name: 'orchestrations-restart-many',
      method: 'POST',
      route: 'orchestrations/restart',
      authLevel: 'function',
      access: 'write',
      tag: 'orchestrations',
      summary:
        'Restart the ended orchestrations matching a filter that the caller may act on, each as a start of its own (at least one filter; ORCHESTRATION_BULK_BATCH per request; dryRun=true only counts)',
    },
    ({ bulkFilter, bulkResult }) => ({
      query: bulkFilter,
      responses: {
        200: {
          description: "What would be, or was, restarted (each one's status and new id); x-ms-continuation-token, when present, goes on",
          schema: bulkResult,
        },
      },
    }),
  ),
  orchestrationsCounts: appRoute(
    {
      name: 'orchestrations-counts',
      method: 'GET',
      route: 'orchestrations/counts',
      authLevel: 'function',
      access: 'read',
      tag: 'orchestrations',
      summary:
        'How many orchestrations the caller sees are in each runtime status, filtered as the list; complete=false when the count stopped at the scan bound',
    },
    ({ purgeFilter, statusDocument }) => ({
      query: purgeFilter,
      responses: {
        200: {
          description: 'The counts; when complete is false, x-ms-continuation-token counts on',
          schema: z.object({ counts: z.record(statusDocument.shape.runtimeStatus, z.number().int()), complete: z.boolean() }),
        },
      },
    }),
  ),
  operationsGet: appRoute(
    {
      name: 'operations-get',
      method: 'GET',
      route: 'operations/{id}',
      authLevel: 'function',
      access: 'read',
      openToStarter: true,
      tag: 'orchestrations',
      summary: "The operation in the upstream's polling protocol: 202 + Retry-After while running, then its final status and body",
    },
    ({ orchestrationId, waitQuery }) => ({
      params: orchestrationId,
      query: waitQuery,
      responses: {
        200: { description: 'The final resource or result' },
        202: { description: 'Still running; follow Location after Retry-After' },
        429: tooManyWaits,
      },
    }),
  ),
} satisfies Record<string, AppRoute>;
