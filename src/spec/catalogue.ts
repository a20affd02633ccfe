/**
 * The operation catalogue: each documented operation once, as data.
 * Function registration, the OpenAPI document and the tests all read it.
 *
 * An entry's schemas, and those of the spec documents it names (src/spec/schemas.ts), are built
 * the first time one is read (validating a call, writing the OpenAPI document): registration
 * reads names, methods and paths only, so a cold start builds none.
 */
import { z } from 'zod';
import { withFieldsOnFirstRead } from '../loading';
import { specDocuments, type SpecDocuments } from './schemas';

export type HttpMethod = 'GET' | 'PUT' | 'POST' | 'DELETE';

/**
 * How a long-running operation is followed:
 * `put` — a PUT whose resource carries `provisioningState`; `post` — a POST answered 202 with `Location`.
 */
export type LongRunningKind = 'put' | 'post';

/**
 * What calling an operation amounts to, for ACCESS_POLICY: `read` (lists,
 * event details), `write` (creates, updates, the migration), `secrets` (the certificate download,
 * whose answer holds the secret).
 */
export type OperationAccess = 'read' | 'write' | 'secrets';

/** The services the app calls: the management service (ARM's protocol) and the lifecycle service (certificates). */
export type UpstreamName = 'management' | 'lifecycle';

export interface OperationSpec {
  /** Function name, unique in the app. */
  name: string;
  operationId: string;
  summary: string;
  method: HttpMethod;
  access: OperationAccess;
  /** Path under the upstream base, `{P}` standing for PROVIDER_NAMESPACE; `{scope}` may hold slashes. */
  pathTemplate: string;
  /** The api-version the spec documents (the caller's own is forwarded as given). */
  apiVersion: string;
  upstream: UpstreamName;
  pathParams: z.ZodObject;
  /** The query parameters the spec names; others (such as `$skipToken` of a nextLink) pass through. */
  query: z.ZodObject;
  body?: { schema: z.ZodType; required: boolean; name: string };
  /** Success statuses and their body schemas (null: no body). */
  responses: Record<number, z.ZodType | null>;
  errorSchema: z.ZodType;
  pageable: boolean;
  longRunning?: LongRunningKind;
  /** Calls limited per environment across instances (the lifecycle service allows one download per environment per minute). */
  rateLimitedPerEnvironment?: boolean;
  /** Doc and endpoint, for descriptions. */
  source: string;
}

type SchemaField = 'pathParams' | 'query' | 'body' | 'responses' | 'errorSchema';
const schemaFields: readonly SchemaField[] = ['pathParams', 'query', 'body', 'responses', 'errorSchema'];

/** An entry: what it declares outright, and its schemas, built on the first read of any of them. */
function operation(entry: Omit<OperationSpec, SchemaField>, schemasOf: (documents: SpecDocuments) => Pick<OperationSpec, SchemaField>): OperationSpec {
  return withFieldsOnFirstRead(entry, schemaFields, () => schemasOf(specDocuments));
}

export const operations: readonly OperationSpec[] = [
  operation(
    {
      name: 'roleAssignmentScheduleInstances-listForScope',
      operationId: 'RoleAssignmentScheduleInstances_ListForScope',
      summary: 'List role assignment schedule instances for a scope',
      method: 'GET',
      access: 'read',
      pathTemplate: '{scope}/providers/{P}.Authorization/roleAssignmentScheduleInstances',
      apiVersion: '2020-10-01',
      upstream: 'management',
      pageable: true,
      source: 'Authorization: role assignment schedule instances of a scope',
    },
    ({ authorization, common }) => ({
      pathParams: z.object({ scope: authorization.scopeParam }),
      query: authorization.scheduleQuery,
      responses: { 200: common.listResult(authorization.roleAssignmentScheduleInstance) },
      errorSchema: common.cloudError,
    }),
  ),
  operation(
    {
      name: 'roleAssignmentSchedules-listForScope',
      operationId: 'RoleAssignmentSchedules_ListForScope',
      summary: 'List role assignment schedules for a scope',
      method: 'GET',
      access: 'read',
      pathTemplate: '{scope}/providers/{P}.Authorization/roleAssignmentSchedules',
      apiVersion: '2020-10-01',
      upstream: 'management',
      pageable: true,
      source: 'Authorization: role assignment schedules of a scope',
    },
    ({ authorization, common }) => ({
      pathParams: z.object({ scope: authorization.scopeParam }),
      query: authorization.scheduleQuery,
      responses: { 200: common.listResult(authorization.roleAssignmentSchedule) },
      errorSchema: common.cloudError,
    }),
  ),
  operation(
    {
      name: 'events-fetchDetailsByTenantIdAndTrackingId',
      operationId: 'Event_fetchDetailsByTenantIdAndTrackingId',
      summary: 'Fetch the details of a service-health event by tracking id',
      method: 'POST',
      access: 'read',
      pathTemplate: 'providers/{P}.ResourceHealth/events/{eventTrackingId}/fetchEventDetails',
      apiVersion: '2025-05-01',
      upstream: 'management',
      pageable: false,
      source: 'Service health: the details of an event',
    },
    ({ common, resourceHealth }) => ({
      pathParams: z.object({ eventTrackingId: z.string().min(1) }),
      query: common.managementQuery,
      responses: { 200: resourceHealth.serviceHealthEvent },
      errorSchema: resourceHealth.resourceHealthErrorResponse,
    }),
  ),
  operation(
    {
      name: 'privateEndpointConnections-createOrUpdate',
      operationId: 'PrivateEndpointConnections_CreateOrUpdate',
      summary: 'Create or update a private endpoint connection of a namespace',
      method: 'PUT',
      access: 'write',
      pathTemplate:
        'subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers/{P}.EventHub/namespaces/{namespaceName}/privateEndpointConnections/{privateEndpointConnectionName}',
      apiVersion: '2026-01-01',
      upstream: 'management',
      pageable: false,
      longRunning: 'put',
      source: 'Event streaming: a private endpoint connection of a namespace',
    },
    ({ common, eventHub }) => ({
      pathParams: z.object({
        // The service documents this subscriptionId with only minLength 1 (the official example uses "subID").
        subscriptionId: z.string().min(1),
        resourceGroupName: common.resourceGroupName,
        namespaceName: eventHub.namespaceName,
        privateEndpointConnectionName: z.string().min(1),
      }),
      query: common.managementQuery,
      body: { schema: eventHub.privateEndpointConnectionRequest, required: true, name: 'parameters' },
      responses: { 200: eventHub.privateEndpointConnection, 201: eventHub.privateEndpointConnection, 202: eventHub.privateEndpointConnection },
      errorSchema: eventHub.errorResponse,
    }),
  ),
  operation(
    {
      name: 'containerGroups-createOrUpdate',
      operationId: 'ContainerGroups_CreateOrUpdate',
      summary: 'Create or update a container group',
      method: 'PUT',
      access: 'write',
      pathTemplate: 'subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers/{P}.ContainerInstance/containerGroups/{containerGroupName}',
      apiVersion: '2025-09-01',
      upstream: 'management',
      pageable: false,
      longRunning: 'put',
      source: 'Container instances: create or update a container group',
    },
    ({ common, containerInstance }) => ({
      pathParams: z.object({ subscriptionId: common.subscriptionIdUuid, resourceGroupName: common.resourceGroupName, containerGroupName: z.string().min(1) }),
      query: common.managementQuery,
      body: { schema: containerInstance.containerGroupRequest, required: true, name: 'containerGroup' },
      responses: { 200: containerInstance.containerGroup, 201: containerInstance.containerGroup },
      errorSchema: common.cloudError,
    }),
  ),
  operation(
    {
      name: 'location-listUsage',
      operationId: 'Location_ListUsage',
      summary: 'List container group usage for a location',
      method: 'GET',
      access: 'read',
      pathTemplate: 'subscriptions/{subscriptionId}/providers/{P}.ContainerInstance/locations/{location}/usages',
      apiVersion: '2026-07-01',
      upstream: 'management',
      pageable: true,
      source: 'Container instances: usage in a location',
    },
    ({ common, containerInstance }) => ({
      pathParams: z.object({ subscriptionId: common.subscriptionIdUuid, location: z.string().min(1) }),
      query: common.managementQuery,
      responses: { 200: common.listResult(containerInstance.usage) },
      errorSchema: common.cloudError,
    }),
  ),
  operation(
    {
      name: 'location-listCachedImages',
      operationId: 'Location_ListCachedImages',
      summary: 'List cached images for a location',
      method: 'GET',
      access: 'read',
      pathTemplate: 'subscriptions/{subscriptionId}/providers/{P}.ContainerInstance/locations/{location}/cachedImages',
      apiVersion: '2026-07-01',
      upstream: 'management',
      pageable: true,
      source: 'Container instances: cached images in a location',
    },
    ({ common, containerInstance }) => ({
      pathParams: z.object({ subscriptionId: common.subscriptionIdUuid, location: z.string().min(1) }),
      query: common.managementQuery,
      responses: { 200: common.listResult(containerInstance.cachedImages) },
      errorSchema: common.cloudError,
    }),
  ),
  operation(
    {
      name: 'apiManagementService-migrateToStv2',
      operationId: 'ApiManagementService_MigrateToStv2',
      summary: 'Migrate a gateway-management service to the second platform generation',
      method: 'POST',
      access: 'write',
      pathTemplate: 'subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers/{P}.ApiManagement/service/{serviceName}/migrateToStv2',
      apiVersion: '2024-05-01',
      upstream: 'management',
      pageable: false,
      longRunning: 'post',
      source: 'API management: migrate a service to the stv2 platform',
    },
    ({ apiManagement, common, eventHub }) => ({
      pathParams: z.object({ subscriptionId: common.subscriptionIdUuid, resourceGroupName: common.resourceGroupName, serviceName: apiManagement.serviceName }),
      query: common.managementQuery,
      body: { schema: apiManagement.migrateToStv2Request, required: false, name: 'parameters' },
      responses: { 200: apiManagement.apiManagementServiceResource, 202: null },
      errorSchema: eventHub.errorResponse,
    }),
  ),
  operation(
    {
      name: 'certificates-download',
      operationId: 'EnvironmentCertificate_Download',
      summary: 'Download the certificate bundle of an environment',
      method: 'GET',
      access: 'secrets',
      pathTemplate: 'environmentinfo/v1/rsatdownload/project/{projectId}/environment/{environmentId}',
      apiVersion: '2017-09-15',
      upstream: 'lifecycle',
      pageable: false,
      rateLimitedPerEnvironment: true,
      source: 'Lifecycle services: download an environment certificate',
    },
    ({ lifecycle }) => ({
      pathParams: z.object({ projectId: lifecycle.projectId, environmentId: lifecycle.environmentId }),
      query: z.looseObject({}),
      responses: { 200: lifecycle.certificateDownloadResponse },
      errorSchema: z.unknown(),
    }),
  ),
];

/** The template with `{P}` replaced by the provider namespace. */
export function resolvePathTemplate(operation: OperationSpec, providerNamespace: string): string {
  return operation.pathTemplate.replaceAll('{P}', providerNamespace);
}

/** Fills a resolved template with parameters, encoding each segment (`scope` keeps its slashes). */
export function fillPath(template: string, params: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (_match, name: string) => {
    const value = params[name] ?? '';
    return name === 'scope' ? value.split('/').map(encodeURIComponent).join('/') : encodeURIComponent(value);
  });
}

/**
 * The route values of a path filled from `template` (fillPath's inverse), or undefined when the
 * path is not one of the template's: how a stored request's path is read back (a restart).
 */
export function pathParamsOf(template: string, path: string): Record<string, string> | undefined {
  const parts = template.split('/');
  let segments = path.split('/');
  const params: Record<string, string> = {};
  if (parts[0] === '{scope}') {
    const scopeLength = segments.length - (parts.length - 1);
    if (scopeLength < 1) return undefined;
    params.scope = segments.slice(0, scopeLength).map(decodeURIComponent).join('/');
    segments = ['', ...segments.slice(scopeLength)];
  }
  if (segments.length !== parts.length) return undefined;
  for (const [index, part] of parts.entries()) {
    if (index === 0 && part === '{scope}') continue;
    const name = /^\{(\w+)\}$/.exec(part)?.[1];
    if (name) params[name] = decodeURIComponent(segments[index]!);
    else if (part.toLowerCase() !== segments[index]!.toLowerCase()) return undefined;
  }
  return params;
}
