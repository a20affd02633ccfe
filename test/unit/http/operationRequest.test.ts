/**
 * Bad input gets one `details` entry per problem naming the parameter or JSON path, before
 * anything goes upstream (issue: "Send bad input and get a 400").
 */
import { GatewayError } from '../../../src/errors';
import { validateOperationCall, type IncomingCall } from '../../../src/calls/operationRequest';
import { operations, type OperationSpec } from '../../../src/spec/catalogue';

const op = (name: string): OperationSpec => operations.find((operation) => operation.name === name)!;
const limits = { maxBodyBytes: 4096, maxPages: 50, maxWaitSeconds: 200 };
const subscriptionId = '00000000-0000-0000-0000-000000000000';

const validGroup = {
  location: 'westus',
  properties: { containers: [{ name: 'web', properties: { image: 'nginx', ports: [{ port: 80, protocol: 'TCP' }] } }], osType: 'Linux' },
};

function call(params: Record<string, string>, query: string, body?: unknown, contentType: string | null = 'application/json'): IncomingCall {
  const bytes = body === undefined ? new Uint8Array() : new TextEncoder().encode(typeof body === 'string' ? body : JSON.stringify(body));
  return { params, query: new URLSearchParams(query), contentType, bodyBytes: bytes };
}

function problems(operation: OperationSpec, incoming: IncomingCall): { status: number; code: string; targets: string[] } {
  try {
    validateOperationCall(operation, incoming, limits);
  } catch (error) {
    if (!(error instanceof GatewayError)) throw error;
    return { status: error.status, code: error.code, targets: (error.details ?? [{ target: error.target ?? '' }]).map((detail) => detail.target ?? '') };
  }
  return { status: 200, code: 'ok', targets: [] };
}

const group = (mutate: (body: typeof validGroup & Record<string, unknown>) => unknown) => {
  const body = structuredClone(validGroup) as typeof validGroup & Record<string, unknown>;
  return mutate(body) ?? body;
};
const groupParams = { subscriptionId, resourceGroupName: 'rg', containerGroupName: 'demo' };
const groupCall = (body: unknown) => call(groupParams, 'api-version=2025-09-01', body);
const pecParams = { subscriptionId: 'subID', resourceGroupName: 'rg', namespaceName: 'sdk-Namespace-2924', privateEndpointConnectionName: 'pec' };
const migrateParams = { subscriptionId, resourceGroupName: 'rg', serviceName: 'apim1' };

describe('validateOperationCall accepts', () => {
  it.each([
    ['containerGroups-createOrUpdate', groupCall(validGroup)],
    [
      'privateEndpointConnections-createOrUpdate',
      call(pecParams, 'api-version=2026-01-01', { properties: { privateLinkServiceConnectionState: { status: 'Approved' } } }),
    ],
    ['apiManagementService-migrateToStv2', call(migrateParams, 'api-version=2024-05-01')],
    ['apiManagementService-migrateToStv2', call(migrateParams, 'api-version=2024-05-01', { mode: 'NewIP' })],
    ['roleAssignmentSchedules-listForScope', call({ scope: 'subscriptions/x' }, "api-version=2020-10-01&$filter=principalId eq 'abc'")],
    ['roleAssignmentSchedules-listForScope', call({ scope: 'subscriptions/x/resourceGroups/y' }, 'api-version=2020-10-01&$filter=asTarget()')],
    ['certificates-download', call({ projectId: '42', environmentId: '6f1a2b3c-1234-4abc-9def-0123456789ab' }, '')],
  ])('a valid %s call', (name, incoming) => {
    expect(problems(op(name), incoming)).toEqual({ status: 200, code: 'ok', targets: [] });
  });

  it('keeps and forwards fields the spec does not name, and never forwards the function key', () => {
    const body = { ...validGroup, futureField: { nested: true } };
    const result = validateOperationCall(
      op('containerGroups-createOrUpdate'),
      call(groupParams, 'api-version=2025-09-01&code=secret-key&x-extra=1', body),
      limits,
    );
    expect(JSON.parse(result.body!.text)).toEqual(body);
    expect(result.forwardQuery).toEqual([
      ['api-version', '2025-09-01'],
      ['x-extra', '1'],
    ]);
  });

  it('reads gateway-pages as all or a page count, capped by MAX_PAGES', () => {
    const listCall = (pages: string) => call({ subscriptionId, location: 'westus' }, `api-version=2026-07-01&gateway-pages=${pages}`);
    expect(validateOperationCall(op('location-listUsage'), listCall('all'), limits).mergePages).toBe(50);
    expect(validateOperationCall(op('location-listUsage'), listCall('3'), limits).mergePages).toBe(3);
    expect(problems(op('location-listUsage'), listCall('zero')).targets).toEqual(['gateway-pages']);
  });
});

describe('validateOperationCall refuses', () => {
  it.each<[string, string, IncomingCall, string[], number?]>([
    [
      'namespaceName shorter than 6',
      'privateEndpointConnections-createOrUpdate',
      call({ ...pecParams, namespaceName: 'abc' }, 'api-version=2026-01-01', {}),
      ['namespaceName'],
    ],
    [
      'namespaceName breaking the pattern',
      'privateEndpointConnections-createOrUpdate',
      call({ ...pecParams, namespaceName: '1namespace_bad' }, 'api-version=2026-01-01', {}),
      ['namespaceName'],
    ],
    [
      'namespaceName longer than 50',
      'privateEndpointConnections-createOrUpdate',
      call({ ...pecParams, namespaceName: `a${'b'.repeat(50)}` }, 'api-version=2026-01-01', {}),
      ['namespaceName'],
    ],
    [
      'resourceGroupName longer than 90',
      'containerGroups-createOrUpdate',
      call({ ...groupParams, resourceGroupName: 'r'.repeat(91) }, 'api-version=2025-09-01', validGroup),
      ['resourceGroupName'],
    ],
    [
      'subscriptionId not a uuid (container instances)',
      'location-listUsage',
      call({ subscriptionId: 'sub1', location: 'westus' }, 'api-version=2026-07-01'),
      ['subscriptionId'],
    ],
    [
      'subscriptionId not a uuid (API management)',
      'apiManagementService-migrateToStv2',
      call({ ...migrateParams, subscriptionId: 'nope' }, 'api-version=2024-05-01'),
      ['subscriptionId'],
    ],
    [
      'serviceName breaking its pattern',
      'apiManagementService-migrateToStv2',
      call({ ...migrateParams, serviceName: 'apim-' }, 'api-version=2024-05-01'),
      ['serviceName'],
    ],
    ['a missing api-version', 'location-listCachedImages', call({ subscriptionId, location: 'westus' }, ''), ['api-version']],
    ['an empty api-version', 'location-listCachedImages', call({ subscriptionId, location: 'westus' }, 'api-version='), ['api-version']],
    ['a repeated api-version', 'location-listCachedImages', call({ subscriptionId, location: 'westus' }, 'api-version=1&api-version=2'), ['api-version']],
    [
      'a $filter of none of the four forms',
      'roleAssignmentScheduleInstances-listForScope',
      call({ scope: 'subscriptions/x' }, "api-version=2020-10-01&$filter=name eq 'x'"),
      ['$filter'],
    ],
    ['a scope with a .. segment', 'roleAssignmentSchedules-listForScope', call({ scope: 'subscriptions/../x' }, 'api-version=2020-10-01'), ['scope']],
    [
      'a projectId that is not an integer',
      'certificates-download',
      call({ projectId: '4x', environmentId: '6f1a2b3c-1234-4abc-9def-0123456789ab' }, ''),
      ['projectId'],
    ],
    ['an environmentId that is not a GUID', 'certificates-download', call({ projectId: '4', environmentId: 'env-1' }, ''), ['environmentId']],
    [
      'a decoded slash in a path parameter',
      'containerGroups-createOrUpdate',
      call({ ...groupParams, containerGroupName: 'a/../b' }, 'api-version=2025-09-01', validGroup),
      ['containerGroupName'],
    ],
    [
      'a container group without containers',
      'containerGroups-createOrUpdate',
      groupCall(group((body) => ({ location: body.location, properties: { osType: 'Linux' } }))),
      ['properties.containers'],
    ],
    [
      'an empty containers array',
      'containerGroups-createOrUpdate',
      groupCall(group((body) => void (body.properties.containers = []))),
      ['properties.containers'],
    ],
    [
      'a mountPath with a colon',
      'containerGroups-createOrUpdate',
      groupCall(
        group((body) => void ((body.properties.containers[0]!.properties as Record<string, unknown>).volumeMounts = [{ name: 'v', mountPath: 'C:/data' }])),
      ),
      ['properties.containers[0].properties.volumeMounts[0].mountPath'],
    ],
    [
      'a git volume directory with ..',
      'containerGroups-createOrUpdate',
      groupCall(
        group(
          (body) =>
            void ((body.properties as Record<string, unknown>).volumes = [
              { name: 'v', gitRepo: { repository: 'https://example/r.git', directory: '../escape' } },
            ]),
        ),
      ),
      ['properties.volumes[0].gitRepo.directory'],
    ],
    [
      'a restartPolicy outside the spec',
      'containerGroups-createOrUpdate',
      groupCall(group((body) => void ((body.properties as Record<string, unknown>).restartPolicy = 'Sometimes'))),
      ['properties.restartPolicy'],
    ],
    ['an osType outside the spec', 'containerGroups-createOrUpdate', groupCall(group((body) => void (body.properties.osType = 'BeOS'))), ['properties.osType']],
    [
      'a sku outside the spec',
      'containerGroups-createOrUpdate',
      groupCall(group((body) => void ((body.properties as Record<string, unknown>).sku = 'Premium'))),
      ['properties.sku'],
    ],
    [
      'a port protocol outside the spec',
      'containerGroups-createOrUpdate',
      groupCall(group((body) => void (body.properties.containers[0]!.properties.ports[0]!.protocol = 'SCTP'))),
      ['properties.containers[0].properties.ports[0].protocol'],
    ],
    [
      'an identity type outside the spec',
      'containerGroups-createOrUpdate',
      groupCall(group((body) => void (body.identity = { type: 'Everyone' }))),
      ['identity.type'],
    ],
    [
      'capabilities that are not names',
      'containerGroups-createOrUpdate',
      groupCall(
        group((body) => void ((body.properties.containers[0]!.properties as Record<string, unknown>).securityContext = { capabilities: { add: [42] } })),
      ),
      ['properties.containers[0].properties.securityContext.capabilities.add[0]'],
    ],
    [
      'two problems at once, each reported',
      'containerGroups-createOrUpdate',
      groupCall(
        group((body) => {
          body.properties.osType = 'BeOS';
          (body.properties as Record<string, unknown>).restartPolicy = 'Sometimes';
        }),
      ),
      ['properties.osType', 'properties.restartPolicy'],
    ],
    [
      'an unknown private endpoint connection status',
      'privateEndpointConnections-createOrUpdate',
      call(pecParams, 'api-version=2026-01-01', { properties: { privateLinkServiceConnectionState: { status: 'Maybe' } } }),
      ['properties.privateLinkServiceConnectionState.status'],
    ],
    [
      'a migration mode other than PreserveIp or NewIP',
      'apiManagementService-migrateToStv2',
      call(migrateParams, 'api-version=2024-05-01', { mode: 'KeepIp' }),
      ['mode'],
    ],
    ['malformed JSON', 'containerGroups-createOrUpdate', groupCall('{"properties": '), ['containerGroup']],
    ['a body over the size limit', 'containerGroups-createOrUpdate', groupCall({ ...validGroup, padding: 'x'.repeat(5000) }), ['containerGroup'], 413],
    [
      'a body that is not JSON by its content type',
      'containerGroups-createOrUpdate',
      call(groupParams, 'api-version=2025-09-01', 'a=b', 'application/x-www-form-urlencoded'),
      ['Content-Type'],
      415,
    ],
    [
      'a body nested deeper than the limit',
      'containerGroups-createOrUpdate',
      groupCall(`{"properties":${'['.repeat(100)}${']'.repeat(100)}}`),
      ['containerGroup'],
    ],
    [
      'invalid UTF-8 in the body (it would be forwarded changed)',
      'containerGroups-createOrUpdate',
      { ...groupCall(validGroup), bodyBytes: Uint8Array.from([...new TextEncoder().encode('{"location":"west'), 0xff, ...new TextEncoder().encode('us"}')]) },
      ['containerGroup'],
    ],
    [
      'a repeated parameter named like an Object.prototype member',
      'location-listUsage',
      call({ subscriptionId, location: 'westus' }, 'api-version=2026-07-01&x=1&x=2'),
      ['x'],
    ],
    [
      'a body on an operation that takes none',
      'location-listUsage',
      call({ subscriptionId, location: 'westus' }, 'api-version=2026-07-01', { any: 1 }),
      ['body'],
    ],
  ])('%s', (_title, name, incoming, targets, status = 400) => {
    const result = problems(op(name), incoming);
    expect(result.status).toBe(status);
    expect(result.targets).toEqual(targets);
  });
});

describe('query names', () => {
  const usage = (query: string) => call({ subscriptionId, location: 'westus' }, query);

  it.each(['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf'])('takes a parameter named %s once as a plain name', (name) => {
    const result = validateOperationCall(op('location-listUsage'), usage(`api-version=2026-07-01&${name}=1`), limits);
    expect(result.forwardQuery).toEqual([
      ['api-version', '2026-07-01'],
      [name, '1'],
    ]);
  });

  it.each(['Code', 'CODE', 'cOdE'])('never forwards the function key sent as ?%s=', (name) => {
    const result = validateOperationCall(op('location-listUsage'), usage(`api-version=2026-07-01&${name}=secret-key`), limits);
    expect(result.forwardQuery).toEqual([['api-version', '2026-07-01']]);
  });

  it('reads gateway-pages in any case, and never forwards it', () => {
    const result = validateOperationCall(op('location-listUsage'), usage('api-version=2026-07-01&Gateway-Pages=2'), limits);
    expect(result.mergePages).toBe(2);
    expect(result.forwardQuery).toEqual([['api-version', '2026-07-01']]);
  });
});

describe('bounded details', () => {
  it('answers 200,000 bad containers with a 400 listing 100 and counting all', () => {
    const containers = Array.from({ length: 200_000 }, () => ({ name: 7 }));
    const incoming = call(groupParams, 'api-version=2025-09-01', { location: 'westus', properties: { osType: 'Linux', containers } });
    let thrown: unknown;
    try {
      validateOperationCall(op('containerGroups-createOrUpdate'), incoming, { ...limits, maxBodyBytes: 64 * 1024 * 1024 });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(GatewayError);
    const error = thrown as GatewayError;
    expect(error.status).toBe(400);
    expect(error.details).toHaveLength(100);
    const total = Number(/has (\d+) problems/.exec(error.message)?.[1]);
    expect(total).toBeGreaterThanOrEqual(200_000);
    expect(error.message).toContain('the first 100 are listed');
  });

  it('shortens a target built from a huge key', () => {
    const key = 'k'.repeat(100_000);
    const incoming = groupCall(group((body) => void ((body as Record<string, unknown>).tags = { [key]: 5 })));
    const error = (() => {
      try {
        validateOperationCall(op('containerGroups-createOrUpdate'), incoming, { ...limits, maxBodyBytes: 1024 * 1024 });
      } catch (thrown) {
        return thrown as GatewayError;
      }
      throw new Error('accepted');
    })();
    expect(JSON.stringify(error.details).length).toBeLessThan(2000);
  });
});
