/**
 * The management operations of Docs 1–3 as the emulator answers them: lists with `nextLink`
 * paging, event details, and three long-running calls that move to a terminal state after a
 * number of status reads (`lroSteps`), each the way the ARM async rules describe:
 * - container group PUT: 201 with `Location` and `Retry-After`;
 * - private endpoint connection PUT: 201/200 with a non-terminal `provisioningState`, then GET the resource;
 * - migrateToStv2 POST: 202 with `location`, which answers 202 until done, then 200 with the service.
 */
import { randomUUID } from 'node:crypto';
import type { EmulatorOptions, Reply } from './emulatorOptions';

/** What these routes read of the emulator: its options, its address, and their own state. */
type EmulatorContext = { options: Required<Omit<EmulatorOptions, 'port'>>; baseUrl: string; management: ManagementState };

interface StoredResource {
  body: Record<string, unknown>;
  /** Status reads left before provisioning ends. */
  readsLeft: number;
  outcome: 'Succeeded' | 'Failed';
  /** With `lroDurationMs`: when provisioning ends, whatever is read. */
  endsAt?: number;
}

interface PendingOperation {
  resourcePath: string;
  readsLeft: number;
  endsAt?: number;
  outcome: 'Succeeded' | 'Failed';
  /** The final answer of a POST operation. */
  result?: Record<string, unknown>;
}

export interface ManagementState {
  resources: Map<string, StoredResource>;
  operations: Map<string, PendingOperation>;
  /** What ARM's x-ms-ratelimit-remaining-subscription-* headers say is left, counting down. */
  remaining: { reads: number; writes: number };
}

const cloudError = (status: number, code: string, message: string): Reply => ({ status, body: { error: { code, message } } });

function parseJson(body: string): { ok: true; value: Record<string, unknown> | undefined } | { ok: false } {
  if (body.trim() === '') return { ok: true, value: undefined };
  try {
    const value = JSON.parse(body) as unknown;
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? { ok: true, value: value as Record<string, unknown> } : { ok: false };
  } catch {
    return { ok: false };
  }
}

export function handleManagement(context: EmulatorContext, method: string, url: URL, body: string): Reply {
  const apiVersion = url.searchParams.get('api-version');
  if (!apiVersion) return cloudError(400, 'MissingApiVersionParameter', 'The api-version query parameter (?api-version=) is required for all requests.');
  const P = context.options.providerNamespace;
  const path = url.pathname;
  let match: RegExpExecArray | null;

  if (
    method === 'GET' &&
    (match = new RegExp(`^/(.+)/providers/${P}\\.Authorization/(roleAssignmentSchedules|roleAssignmentScheduleInstances)$`, 'i').exec(path))
  ) {
    return listSchedules(context, url, match[1]!, match[2]!);
  }
  if (method === 'POST' && (match = new RegExp(`^/providers/${P}\\.ResourceHealth/events/([^/]+)/fetchEventDetails$`, 'i').exec(path))) {
    return fetchEventDetails(context, decodeURIComponent(match[1]!));
  }
  if (
    (match = new RegExp(
      `^/subscriptions/([^/]+)/resourceGroups/([^/]+)/providers/${P}\\.EventHub/namespaces/([^/]+)/privateEndpointConnections/([^/]+)$`,
      'i',
    ).exec(path))
  ) {
    if (method === 'PUT') return putPrivateEndpointConnection(context, path, body, match);
    if (method === 'GET') return getResource(context, path);
  }
  if ((match = new RegExp(`^/subscriptions/([^/]+)/resourceGroups/([^/]+)/providers/${P}\\.ContainerInstance/containerGroups/([^/]+)$`, 'i').exec(path))) {
    if (method === 'PUT') return putContainerGroup(context, path, body, match);
    if (method === 'GET') return getResource(context, path);
  }
  if (
    method === 'GET' &&
    (match = new RegExp(`^/subscriptions/([^/]+)/providers/${P}\\.ContainerInstance/locations/([^/]+)/operationResults/([^/]+)$`, 'i').exec(path))
  ) {
    return readLocation(context, match[3]!);
  }
  if (
    method === 'GET' &&
    (match = new RegExp(`^/subscriptions/([^/]+)/providers/${P}\\.ContainerInstance/locations/([^/]+)/(usages|cachedImages)$`, 'i').exec(path))
  ) {
    return listLocationItems(context, url, match[2]!, match[3]!.toLowerCase() === 'usages' ? 'usages' : 'cachedImages');
  }
  if (
    method === 'POST' &&
    (match = new RegExp(`^/subscriptions/([^/]+)/resourceGroups/([^/]+)/providers/${P}\\.ApiManagement/service/([^/]+)/migrateToStv2$`, 'i').exec(path))
  ) {
    return migrateToStv2(context, path, body, match);
  }
  if (
    method === 'GET' &&
    (match = new RegExp(`^/subscriptions/([^/]+)/resourceGroups/([^/]+)/providers/${P}\\.ApiManagement/service/([^/]+)/operationresults/([^/]+)$`, 'i').exec(
      path,
    ))
  ) {
    return readLocation(context, match[4]!);
  }
  return cloudError(404, 'NotFound', `No route for ${method} ${path}.`);
}

/** One page of a generated list, with `nextLink` carrying `$skipToken` to the next. */
function page(context: EmulatorContext, url: URL, items: (index: number) => unknown): Reply {
  const { listItems, pageSize } = context.options;
  const start = Number(url.searchParams.get('$skipToken') ?? '0');
  const end = Math.min(start + pageSize, listItems);
  const value = Array.from({ length: Math.max(0, end - start) }, (_unused, offset) => items(start + offset));
  const body: Record<string, unknown> = { value };
  if (end < listItems) {
    const next = new URL(url.toString());
    next.searchParams.set('$skipToken', String(end));
    body.nextLink = `${context.baseUrl}${next.pathname}${next.search}`;
  }
  return { status: 200, body };
}

const filterForms = [/^atScope\(\)$/, /^asTarget\(\)$/, /^principalId eq '?[^']+'?$/, /^assignedTo\('[^']+'\)$/];

function listSchedules(context: EmulatorContext, url: URL, scope: string, collection: string): Reply {
  const filter = url.searchParams.get('$filter');
  if (filter !== null && !filterForms.some((form) => form.test(filter.trim()))) {
    return cloudError(400, 'BadRequest', 'The filter is not supported.');
  }
  const P = context.options.providerNamespace;
  const instances = collection.toLowerCase() === 'roleassignmentscheduleinstances';
  return page(context, url, (index) => {
    const id = `00000000-0000-4000-a000-${String(index).padStart(12, '0')}`;
    return {
      id: `/${scope}/providers/${P}.Authorization/${collection}/${id}`,
      name: id,
      type: `${P}.Authorization/${instances ? 'RoleAssignmentScheduleInstances' : 'RoleAssignmentSchedules'}`,
      properties: {
        scope: `/${scope}`,
        roleDefinitionId: `/${scope}/providers/${P}.Authorization/roleDefinitions/${id}`,
        principalId: id,
        principalType: 'User',
        assignmentType: 'Assigned',
        memberType: 'Direct',
        status: 'Provisioned',
        startDateTime: '2026-01-01T00:00:00Z',
        createdOn: '2026-01-01T00:00:00Z',
        ...(instances ? { roleAssignmentScheduleId: id } : { updatedOn: '2026-01-02T00:00:00Z' }),
      },
    };
  });
}

function listLocationItems(context: EmulatorContext, url: URL, location: string, kind: 'usages' | 'cachedImages'): Reply {
  return page(context, url, (index) =>
    kind === 'usages'
      ? {
          id: `usage-${index}`,
          name: { value: `Resource${index}`, localizedValue: `Resource ${index} in ${location}` },
          currentValue: index,
          limit: 100 + index,
          unit: 'Count',
        }
      : { image: `registry.example/image-${index}:latest`, osType: index % 2 === 0 ? 'Linux' : 'Windows' },
  );
}

function fetchEventDetails(context: EmulatorContext, trackingId: string): Reply {
  if (trackingId.toLowerCase().startsWith('missing')) {
    // Service-health event errors use ErrorResponse with code, message and details at the top.
    return { status: 404, body: { code: 'NotFound', message: `Event ${trackingId} was not found.`, details: 'No event has this tracking id.' } };
  }
  const P = context.options.providerNamespace;
  return {
    status: 200,
    body: {
      id: `/providers/${P}.ResourceHealth/events/${trackingId}`,
      name: trackingId,
      type: `${P}.ResourceHealth/events`,
      properties: {
        eventType: 'SecurityAdvisory',
        eventSource: 'ServiceHealth',
        status: 'Active',
        title: 'Security advisory',
        summary: 'Sensitive summary, returned by the fetch operation only.',
        description: 'Sensitive description.',
        isEventSensitive: true,
        level: 'Warning',
        eventLevel: 'Warning',
        priority: 3,
        impactStartTime: '2026-01-01T00:00:00Z',
        lastUpdateTime: '2026-01-01T01:00:00Z',
        impact: [
          {
            impactedService: 'Container Groups',
            impactedRegions: [{ impactedRegion: 'westus', status: 'Active', updates: [{ summary: 'Investigating', updateDateTime: '2026-01-01T00:30:00Z' }] }],
          },
        ],
      },
    },
  };
}

function getResource(context: EmulatorContext, path: string): Reply {
  const stored = context.management.resources.get(path.toLowerCase());
  if (!stored) return cloudError(404, 'ResourceNotFound', `The resource ${path} was not found.`);
  advance(context, stored);
  return { status: 200, body: stored.body };
}

/** When an operation started now ends: after `lroDurationMs`, if set. */
function endsAt(context: EmulatorContext): number | undefined {
  return context.options.lroDurationMs > 0 ? context.options.now() + context.options.lroDurationMs : undefined;
}

/** One status read: count down (or look at the clock), and settle provisioningState at the end. */
function advance(context: EmulatorContext, stored: StoredResource): void {
  const properties = stored.body.properties as Record<string, unknown>;
  if (stored.readsLeft > 0) stored.readsLeft -= 1;
  const done = stored.endsAt !== undefined ? context.options.now() >= stored.endsAt : stored.readsLeft === 0;
  if (done) properties.provisioningState = stored.outcome;
}

const endpointStatuses = ['Pending', 'Approved', 'Rejected', 'Disconnected'];

function putPrivateEndpointConnection(context: EmulatorContext, path: string, body: string, match: RegExpExecArray): Reply {
  const parsed = parseJson(body);
  if (!parsed.ok) return { status: 400, body: { error: { code: 'InvalidRequestContent', message: 'The request content is not valid JSON.' } } };
  const namespace = match[3]!;
  if (!/^[a-zA-Z][a-zA-Z0-9-]{6,50}[a-zA-Z0-9]$/.test(namespace)) {
    return { status: 400, body: { error: { code: 'InvalidNamespaceName', message: 'The namespace name is not valid.', target: 'namespaceName' } } };
  }
  const properties = (parsed.value?.properties ?? {}) as Record<string, unknown>;
  const state = properties.privateLinkServiceConnectionState as { status?: string } | undefined;
  if (state?.status !== undefined && !endpointStatuses.includes(state.status)) {
    return { status: 400, body: { error: { code: 'InvalidConnectionStatus', message: 'The connection status is not valid.' } } };
  }
  const existing = context.management.resources.get(path.toLowerCase());
  const resource = {
    id: path,
    name: decodeURIComponent(match[4]!),
    type: `${context.options.providerNamespace}.EventHub/Namespaces/PrivateEndpointConnections`,
    location: 'westus',
    properties: { ...properties, provisioningState: existing ? 'Updating' : 'Creating' },
  };
  context.management.resources.set(path.toLowerCase(), { body: resource, readsLeft: context.options.lroSteps, outcome: 'Succeeded', endsAt: endsAt(context) });
  return { status: existing ? 200 : 201, body: resource };
}

/** Secret values are not echoed (the service hides them in responses). */
function withoutSecrets(group: Record<string, unknown>): Record<string, unknown> {
  const copy = JSON.parse(JSON.stringify(group)) as { properties: Record<string, unknown> };
  const properties = copy.properties;
  for (const container of [...((properties.containers as unknown[]) ?? []), ...((properties.initContainers as unknown[]) ?? [])]) {
    const variables = (container as { properties?: { environmentVariables?: Record<string, unknown>[] } }).properties?.environmentVariables ?? [];
    for (const variable of variables) delete variable.secureValue;
  }
  for (const volume of (properties.volumes as Record<string, Record<string, unknown>>[] | undefined) ?? []) {
    if (volume.cloudFile) delete volume.cloudFile.storageAccountKey;
    if (volume.secret) volume.secret = {};
  }
  for (const credential of (properties.imageRegistryCredentials as Record<string, unknown>[] | undefined) ?? []) delete credential.password;
  for (const extension of (properties.extensions as { properties?: Record<string, unknown> }[] | undefined) ?? [])
    delete extension.properties?.protectedSettings;
  const logAnalytics = (properties.diagnostics as { logAnalytics?: Record<string, unknown> } | undefined)?.logAnalytics;
  if (logAnalytics) delete logAnalytics.workspaceKey;
  return copy as unknown as Record<string, unknown>;
}

function putContainerGroup(context: EmulatorContext, path: string, body: string, match: RegExpExecArray): Reply {
  const parsed = parseJson(body);
  if (!parsed.ok || !parsed.value) return cloudError(400, 'InvalidRequestContent', 'The request content is not valid JSON.');
  const properties = parsed.value.properties as Record<string, unknown> | undefined;
  const containers = properties?.containers;
  if (!Array.isArray(containers) || containers.length === 0) {
    return cloudError(400, 'ContainerGroupContainersRequired', 'The container group must have at least one container.');
  }
  const existing = context.management.resources.get(path.toLowerCase());
  // A container whose image names "fail" makes the deployment fail, for tests of the failed path.
  const fails = containers.some((container) => /fail/i.test(String((container as { properties?: { image?: unknown } }).properties?.image ?? '')));
  const resource = withoutSecrets({
    ...parsed.value,
    id: path,
    name: decodeURIComponent(match[3]!),
    type: `${context.options.providerNamespace}.ContainerInstance/containerGroups`,
    properties: { ...properties, provisioningState: existing ? 'Updating' : 'Pending', instanceView: { events: [], state: 'Pending' } },
  });
  const stored: StoredResource = { body: resource, readsLeft: context.options.lroSteps, outcome: fails ? 'Failed' : 'Succeeded', endsAt: endsAt(context) };
  context.management.resources.set(path.toLowerCase(), stored);
  const operationId = randomUUID();
  context.management.operations.set(operationId, {
    resourcePath: path.toLowerCase(),
    readsLeft: context.options.lroSteps,
    outcome: stored.outcome,
    endsAt: stored.endsAt,
  });
  const location = String((parsed.value.location as string | undefined) ?? 'westus')
    .replace(/\s+/g, '')
    .toLowerCase();
  const headers = {
    Location: `${context.baseUrl}/subscriptions/${match[1]}/providers/${context.options.providerNamespace}.ContainerInstance/locations/${location}/operationResults/${operationId}?api-version=2025-09-01`,
    'Retry-After': String(context.options.retryAfterSeconds),
  };
  return { status: existing ? 200 : 201, headers, body: resource };
}

const migrationModes = ['PreserveIp', 'NewIP'];

function migrateToStv2(context: EmulatorContext, path: string, body: string, match: RegExpExecArray): Reply {
  const parsed = parseJson(body);
  if (!parsed.ok) return { status: 400, body: { error: { code: 'InvalidRequestContent', message: 'The request content is not valid JSON.' } } };
  const mode = (parsed.value?.mode as string | undefined) ?? 'PreserveIp';
  if (!migrationModes.includes(mode))
    return { status: 400, body: { error: { code: 'InvalidParameter', message: 'mode must be PreserveIp or NewIP.', target: 'mode' } } };
  const serviceName = decodeURIComponent(match[3]!);
  if (serviceName.toLowerCase().startsWith('missing')) {
    return { status: 404, body: { error: { code: 'ResourceNotFound', message: `The service ${serviceName} was not found.` } } };
  }
  const servicePath = path.slice(0, path.length - '/migrateToStv2'.length);
  const operationId = randomUUID();
  const fails = serviceName.toLowerCase().includes('fail');
  context.management.operations.set(operationId, {
    resourcePath: servicePath.toLowerCase(),
    readsLeft: context.options.lroSteps,
    endsAt: endsAt(context),
    outcome: fails ? 'Failed' : 'Succeeded',
    result: {
      id: servicePath,
      name: serviceName,
      type: `${context.options.providerNamespace}.ApiManagement/service`,
      location: 'West US',
      etag: 'AAAAAADqC0c=',
      sku: { name: 'Developer', capacity: 1 },
      properties: {
        provisioningState: 'Succeeded',
        platformVersion: 'stv2',
        publisherEmail: 'admin@example.com',
        publisherName: 'Example',
        virtualNetworkType: 'None',
      },
    },
  });
  return {
    status: 202,
    headers: {
      location: `${context.baseUrl}${servicePath}/operationresults/${operationId}?api-version=2024-05-01`,
      'Retry-After': String(context.options.retryAfterSeconds),
    },
  };
}

/** A `Location` status read: 202 while running, then the final answer (final-state-via: location). */
function readLocation(context: EmulatorContext, operationId: string): Reply {
  const operation = context.management.operations.get(operationId);
  if (!operation) return cloudError(404, 'OperationNotFound', `Operation ${operationId} was not found.`);
  if (operation.readsLeft > 0) operation.readsLeft -= 1;
  const running = operation.endsAt !== undefined ? context.options.now() < operation.endsAt : operation.readsLeft > 0;
  if (running) return { status: 202, headers: { 'Retry-After': String(context.options.retryAfterSeconds) } };
  if (operation.outcome === 'Failed') {
    return { status: 400, body: { error: { code: 'DeploymentFailed', message: 'The operation failed: the image could not be pulled.' } } };
  }
  if (operation.result) return { status: 200, body: operation.result };
  const stored = context.management.resources.get(operation.resourcePath);
  if (!stored) return cloudError(404, 'ResourceNotFound', 'The resource was deleted.');
  stored.readsLeft = 0;
  stored.endsAt = undefined;
  advance(context, stored);
  return { status: 200, body: stored.body };
}
