/**
 * What infra/main.json (compiled from infra/main.bicep) deploys, as Resource Manager would evaluate it (./armTemplate.ts), held to
 * the deployment policy: storage without shared keys, identity-based host storage, Application
 * Insights without local auth, secrets only in Key Vault, HTTPS only, no FTP or basic publishing
 * credentials, settings Flex Consumption accepts, and each role the host and the operations need,
 * with its built-in role definition, at its scope.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseConfig } from '../../../src/settings/config';
import { appSettingsOf, type DeployedResource, type Deployment, deploy, type JsonObject, mainTemplate, repositoryRoot, requiredParameters, resourcesOf as templateResources, secrets, strings, type Template } from './armTemplate';

/** A value no other part of the template could make, to find everywhere a secret goes. */
const secretValue = (parameter: string) => `sentinel-of-${parameter}`;
const withSecrets = Object.fromEntries(secrets.map(({ parameter }) => [parameter, secretValue(parameter)]));

/**
 * The built-in roles, by the GUIDs Microsoft publishes ("Azure built-in roles"; each checked there
 * and in the azure-docs sources of that page, except Service Health Security Reader, added in 2025:
 * its definition as Azure serves it, /providers/Microsoft.Authorization/roleDefinitions/<guid>).
 */
const builtInRoles = {
  'Storage Blob Data Owner': 'b7e6dc6d-f1e8-4753-8033-0f276bb0955b',
  'Monitoring Metrics Publisher': '3913510d-42f4-4e42-8a64-420c390055eb',
  'Key Vault Secrets User': '4633458b-17de-408a-b874-0445c86b69e6',
  Reader: 'acdd72a7-3385-48ef-bd42-f606fba81ae7',
  'Azure Container Instances Contributor Role': '5d977122-f97e-4b4d-a52f-6b43003ddb4d',
  'Network Contributor': '4d97b98b-1d4f-4787-a291-c67834d212e7',
  'Managed Identity Operator': 'f1a07417-d97a-45cb-824c-7a7467783830',
  'Service Health Security Reader': '1a928ab0-1fee-43cf-9266-f9d8c22a8ddb',
  'Azure Event Hubs Data Owner': 'f526a384-b230-433a-b45c-95f59c4a2dec',
  'API Management Service Contributor': '312a565d-c81f-4fd8-895a-4e21e48d571c',
} as const;

/**
 * The least-privilege roles of docs/deploy.md's "Managed identity and roles" table, each granted at
 * a scope the caller names (a subscription or a resource group; a narrower scope, one resource such
 * as a subnet, an identity or an API Management service, or the tenant root, is granted after the
 * deployment with `az role assignment create`).
 */
const operationRoles = [
  { role: 'Reader', scope: '/subscriptions/11111111-1111-1111-1111-111111111111' },
  { role: 'Azure Container Instances Contributor Role', scope: '/subscriptions/11111111-1111-1111-1111-111111111111/resourceGroups/rg-bot' },
  { role: 'Network Contributor', scope: '/subscriptions/11111111-1111-1111-1111-111111111111/resourceGroups/rg-network' },
  { role: 'Managed Identity Operator', scope: '/subscriptions/11111111-1111-1111-1111-111111111111/resourceGroups/rg-identities' },
  { role: 'Service Health Security Reader', scope: '/subscriptions/22222222-2222-2222-2222-222222222222' },
  { role: 'Azure Event Hubs Data Owner', scope: '/subscriptions/11111111-1111-1111-1111-111111111111/resourceGroups/rg-events' },
  { role: 'API Management Service Contributor', scope: '/subscriptions/11111111-1111-1111-1111-111111111111/resourceGroups/rg-apim' },
] as const;

/**
 * App settings the Flex Consumption plan rejects or ignores, from Microsoft's list "Flex
 * Consumption plan deprecations" (learn.microsoft.com/azure/azure-functions/functions-app-settings
 * #flex-consumption-plan-deprecations; in its first form in flex-consumption-plan.md, "Deprecated
 * properties and settings"): the runtime and its version go in functionAppConfig.runtime, the
 * package in functionAppConfig.deployment, the scale in functionAppConfig.scaleAndConcurrency. And
 * what would make it a storage of keys or a build on the server, which this deployment does not do.
 */
const flexRejectedSettings = [
  'FUNCTIONS_EXTENSION_VERSION',
  'FUNCTIONS_WORKER_RUNTIME',
  'FUNCTIONS_WORKER_RUNTIME_VERSION',
  'FUNCTIONS_MAX_HTTP_CONCURRENCY',
  'FUNCTIONS_WORKER_PROCESS_COUNT',
  'FUNCTIONS_WORKER_DYNAMIC_CONCURRENCY_ENABLED',
  'WEBSITE_NODE_DEFAULT_VERSION',
  'WEBSITE_CONTENTAZUREFILECONNECTIONSTRING',
  'WEBSITE_CONTENTSHARE',
  'WEBSITE_CONTENTOVERVNET',
  'WEBSITE_SKIP_CONTENTSHARE_VALIDATION',
  'WEBSITE_RUN_FROM_PACKAGE',
  'WEBSITE_MAX_DYNAMIC_APPLICATION_SCALE_OUT',
  'SCM_DO_BUILD_DURING_DEPLOYMENT',
  'ENABLE_ORYX_BUILD',
  'AzureWebJobsStorage',
];
/** Site properties of the same list: FTPS, 32-bit, always on and the stack settings do not exist on Flex. */
const flexRejectedSiteConfig = ['ftpsState', 'use32BitWorkerProcess', 'alwaysOn', 'preWarmedInstanceCount', 'functionAppScaleLimit', 'linuxFxVersion', 'windowsFxVersion', 'netFrameworkVersion', 'javaVersion', 'powerShellVersion'];
const flexRejectedSiteProperties = ['containerSize', 'isXenon', 'reserved'];

const baseParameters = requiredParameters;

function resourcesOf(deployment: Deployment, type: string): DeployedResource[] {
  return deployment.resources.filter((resource) => resource.type === type);
}

function theOne(deployment: Deployment, type: string): DeployedResource {
  const found = resourcesOf(deployment, type);
  if (found.length !== 1) throw new Error(`Expected one ${type}, found ${found.length}`);
  return found[0]!;
}

const propertiesOf = (resource: DeployedResource) => resource.resource.properties as JsonObject;

/** What a role assignment grants (the GUID of a built-in role definition), to whom, and where. */
function grantsOf(deployment: Deployment): { role: string; principal: string; scope: string; principalType: unknown }[] {
  return resourcesOf(deployment, 'Microsoft.Authorization/roleAssignments').map((assignment) => {
    const properties = propertiesOf(assignment);
    const role = /^\/subscriptions\/[^/]+\/providers\/Microsoft\.Authorization\/roleDefinitions\/([0-9a-f-]{36})$/.exec(String(properties.roleDefinitionId))?.[1];
    if (!role) throw new Error(`${assignment.id} grants no built-in role definition: ${String(properties.roleDefinitionId)}`);
    const scope = assignment.id.slice(0, assignment.id.lastIndexOf('/providers/Microsoft.Authorization/roleAssignments/'));
    return { role, principal: String(properties.principalId), scope, principalType: properties.principalType };
  });
}

describe('infra/main.json, deployed with the defaults', () => {
  const deployment = deploy(mainTemplate(), baseParameters);
  const settings = appSettingsOf(deployment);
  const storage = theOne(deployment, 'Microsoft.Storage/storageAccounts');
  const identity = theOne(deployment, 'Microsoft.ManagedIdentity/userAssignedIdentities');
  const site = theOne(deployment, 'Microsoft.Web/sites');
  const siteProperties = propertiesOf(site);
  const clientId = `{reference(${identity.id}).clientId}`;

  it('makes a storage account that takes no shared key, only TLS 1.2 and HTTPS, and no anonymous reads', () => {
    expect(propertiesOf(storage)).toMatchObject({ allowSharedKeyAccess: false, minimumTlsVersion: 'TLS1_2', supportsHttpsTrafficOnly: true, allowBlobPublicAccess: false });
  });

  it("makes the app's containers (the defaults of src/settings/config.ts) and the deployment package's, none public", () => {
    const config = parseConfig({ MANAGEMENT_BASE_URL: 'https://management.azure.com', LIFECYCLE_BASE_URL: 'https://lcsapi.lcs.dynamics.com' });
    const containers = resourcesOf(deployment, 'Microsoft.Storage/storageAccounts/blobServices/containers');
    expect(containers.map(({ name }) => name.split('/')[2])).toEqual(expect.arrayContaining([config.ORCHESTRATION_CONTAINER, config.CERT_CONTAINER, config.CERT_SECRET_CONTAINER]));
    expect(containers.every(({ id }) => id.startsWith(`${storage.id}/blobServices/default/containers/`))).toBe(true);
    expect(containers.map((container) => propertiesOf(container).publicAccess)).toEqual(containers.map(() => 'None'));
    const packageStorage = ((siteProperties.functionAppConfig as JsonObject).deployment as JsonObject).storage as JsonObject;
    const packageContainer = String(packageStorage.value).replace(`{reference(${storage.id}).primaryEndpoints.blob}`, '');
    expect(containers.map(({ name }) => name.split('/')[2])).toContain(packageContainer);
  });

  it('reads the package with the user-assigned identity, runs Node 22 on Flex Consumption, and scales as the parameters say', () => {
    const plan = theOne(deployment, 'Microsoft.Web/serverfarms');
    expect(plan.resource.sku).toEqual({ name: 'FC1', tier: 'FlexConsumption' });
    expect(propertiesOf(plan).reserved).toBe(true);
    expect(site.resource.kind).toBe('functionapp,linux');
    expect(siteProperties.serverFarmId).toBe(plan.id);
    expect(site.resource.identity).toEqual({ type: 'UserAssigned', userAssignedIdentities: { [identity.id]: {} } });
    expect(siteProperties.functionAppConfig).toMatchObject({
      deployment: { storage: { type: 'blobContainer', authentication: { type: 'UserAssignedIdentity', userAssignedIdentityResourceId: identity.id } } },
      runtime: { name: 'node', version: '22' },
      scaleAndConcurrency: { instanceMemoryMB: 2048, maximumInstanceCount: 100 },
    });
    expect(site.resource.tags).toMatchObject({ 'azd-service-name': 'api', 'azd-env-name': baseParameters.environmentName });
  });

  it('is HTTPS only, with FTP and basic publishing credentials off (as Flex takes them: no ftpsState)', () => {
    expect(siteProperties.httpsOnly).toBe(true);
    const policies = resourcesOf(deployment, 'Microsoft.Web/sites/basicPublishingCredentialsPolicies');
    expect(policies.map(({ id, resource }) => [id, (resource.properties as JsonObject).allow])).toEqual([
      [`${site.id}/basicPublishingCredentialsPolicies/ftp`, false],
      [`${site.id}/basicPublishingCredentialsPolicies/scm`, false],
    ]);
  });

  it('sets no app setting or site property Flex Consumption rejects', () => {
    expect([...settings.keys()].filter((name) => flexRejectedSettings.some((rejected) => rejected.toLowerCase() === name.toLowerCase()))).toEqual([]);
    expect(Object.keys(siteProperties.siteConfig as JsonObject).filter((name) => flexRejectedSiteConfig.includes(name))).toEqual([]);
    expect(Object.keys(siteProperties).filter((name) => flexRejectedSiteProperties.includes(name))).toEqual([]);
  });

  it('reaches host storage with the identity, never with a key', () => {
    expect(settings.get('AzureWebJobsStorage__accountName')).toBe(storage.name);
    expect(settings.get('AzureWebJobsStorage__credential')).toBe('managedidentity');
    expect(settings.get('AzureWebJobsStorage__clientId')).toBe(clientId);
    expect(settings.get('AZURE_CLIENT_ID')).toBe(clientId);
    const connectionStrings = [...settings].filter(([name, value]) => name === 'AzureWebJobsStorage' || (/ConnectionString/i.test(name) && name !== 'APPLICATIONINSIGHTS_CONNECTION_STRING') || /AccountKey=|SharedAccessSignature=/i.test(value));
    expect(connectionStrings).toEqual([]);
    const templateText = readFileSync(join(repositoryRoot, 'infra', 'main.json'), 'utf8');
    expect(templateText).not.toMatch(/listKeys\(|listAccountSas|listServiceSas|AccountKey=|DefaultEndpointsProtocol/i);
  });

  it('makes Application Insights on the workspace with local auth off, and the host signs in to it with the identity', () => {
    const insights = theOne(deployment, 'Microsoft.Insights/components');
    expect(propertiesOf(insights)).toMatchObject({ DisableLocalAuth: true, WorkspaceResourceId: theOne(deployment, 'Microsoft.OperationalInsights/workspaces').id });
    expect(settings.get('APPLICATIONINSIGHTS_AUTHENTICATION_STRING')).toBe(`ClientId=${clientId};Authorization=AAD`);
    expect(settings.get('APPLICATIONINSIGHTS_CONNECTION_STRING')).toBe(`{reference(${insights.id}).ConnectionString}`);
  });

  it('makes a Key Vault with RBAC authorization, the identity resolving its references', () => {
    const vault = theOne(deployment, 'Microsoft.KeyVault/vaults');
    expect(propertiesOf(vault)).toMatchObject({ enableRbacAuthorization: true, enableSoftDelete: true });
    expect(siteProperties.keyVaultReferenceIdentity).toBe(identity.id);
  });

  it('grants the identity what the host needs, each on its resource: blobs, metrics, secrets; nothing else', () => {
    const principal = `{reference(${identity.id}).principalId}`;
    const scopeOf = (type: string) => theOne(deployment, type).id;
    expect(grantsOf(deployment)).toEqual([
      { role: builtInRoles['Storage Blob Data Owner'], principal, scope: scopeOf('Microsoft.Storage/storageAccounts'), principalType: 'ServicePrincipal' },
      { role: builtInRoles['Monitoring Metrics Publisher'], principal, scope: scopeOf('Microsoft.Insights/components'), principalType: 'ServicePrincipal' },
      { role: builtInRoles['Key Vault Secrets User'], principal, scope: scopeOf('Microsoft.KeyVault/vaults'), principalType: 'ServicePrincipal' },
    ]);
  });

  it('makes no secret, and no setting for one', () => {
    expect(resourcesOf(deployment, 'Microsoft.KeyVault/vaults/secrets')).toEqual([]);
    expect(secrets.filter(({ setting }) => settings.has(setting))).toEqual([]);
  });
});

describe('infra/main.json with secrets', () => {
  const deployment = deploy(mainTemplate(), { ...baseParameters, ...withSecrets });
  const settings = appSettingsOf(deployment);
  const vault = theOne(deployment, 'Microsoft.KeyVault/vaults');

  it('declares each secret a securestring with no secret as its default, and hands them to the Key Vault module alone, as a secure object', () => {
    // The outer template's default is empty, meaning "none": the portal's form and an az deployment
    // without it then leave that feature off instead of demanding a value (an empty default is no
    // secret). The module, which only the outer template deploys, has none.
    const template = mainTemplate();
    const declared = secrets.map(({ parameter }) => [parameter, template.parameters?.[parameter]?.type, template.parameters?.[parameter]?.defaultValue]);
    expect(declared).toEqual(secrets.map(({ parameter }) => [parameter, 'securestring', '']));
    const modules = templateResources(template).filter(([, resource]) => JSON.stringify((resource.properties as JsonObject | undefined)?.parameters ?? {}).match(/parameters\('(\w+)'\)/g)?.some((use) => secrets.some(({ parameter }) => use === `parameters('${parameter}')`)));
    expect(modules.map(([symbol]) => symbol)).toEqual(['keyVault']);
    const keyVault = (modules[0]![1].properties as JsonObject).template as unknown as Template;
    expect(keyVault.parameters?.secretValues).toMatchObject({ type: 'secureObject' });
    expect(keyVault.parameters?.secretValues?.defaultValue).toBeUndefined();
  });

  it('keeps each in the Key Vault and sets its app setting to a Key Vault reference to it', () => {
    const vaultSecrets = resourcesOf(deployment, 'Microsoft.KeyVault/vaults/secrets');
    const byId = ([left]: unknown[], [right]: unknown[]) => String(left).localeCompare(String(right));
    expect(vaultSecrets.map(({ id, resource }) => [id, (resource.properties as JsonObject).value]).sort(byId)).toEqual(
      secrets.map(({ parameter, secretName }) => [`${vault.id}/secrets/${secretName}`, secretValue(parameter)]).sort(byId),
    );
    const vaultUri = `{reference(${vault.id}).vaultUri}`;
    expect(secrets.map(({ setting }) => settings.get(setting))).toEqual(secrets.map(({ secretName }) => `@Microsoft.KeyVault(SecretUri=${vaultUri}secrets/${secretName})`));
  });

  it('puts no secret anywhere else: not in a setting, a name, a tag, nor an output', () => {
    const places = [
      ...deployment.resources.flatMap(({ id, resource }) => [...strings(resource)].map(({ path, text }) => ({ where: `${id}${path}`, text }))),
      ...deployment.templates.flatMap(({ outputs }, index) => [...strings(outputs)].map(({ path, text }) => ({ where: `outputs of template ${index}${path}`, text }))),
    ];
    const holding = places.filter(({ text }) => secrets.some(({ parameter }) => text.includes(secretValue(parameter))));
    // The vault secret's value, and the Key Vault module's deployment handing it down as it came.
    const allowed = (where: string) =>
      /\/providers\/Microsoft\.KeyVault\/vaults\/[^/]+\/secrets\/[^/.]+\.properties\.value$/.test(where) || /\/deployments\/keyVault\.properties\.parameters\.secretValues\.value\.[\w-]+$/.test(where);
    expect(holding.map(({ where }) => where).filter((where) => !allowed(where))).toEqual([]);
    expect(holding.length).toBe(secrets.length * 2);
  });

  it('outputs names and ids only: no securestring, no key', () => {
    const template = mainTemplate();
    expect(Object.values(template.outputs ?? {}).map(({ type }) => type)).toEqual(Object.values(template.outputs ?? {}).map(() => 'string'));
    expect(JSON.stringify(template.outputs)).not.toMatch(/list\w*\(|ConnectionString|InstrumentationKey/i);
  });
});

describe("infra/main.json's operation roles", () => {
  const deployment = deploy(mainTemplate(), { ...baseParameters, operationRoles: [...operationRoles] });
  const principal = `{reference(${theOne(deployment, 'Microsoft.ManagedIdentity/userAssignedIdentities').id}).principalId}`;

  it('grants each role the caller names, with its built-in definition, at its scope, to the identity', () => {
    // Those beside the host's, which are on resources of the app's own resource group.
    const appGroup = theOne(deployment, 'Microsoft.Resources/resourceGroups').id;
    const grants = grantsOf(deployment).filter((grant) => grant.principal === principal && !grant.scope.startsWith(`${appGroup}/`));
    expect(grants.map(({ role, scope, principalType }) => ({ role, scope, principalType }))).toEqual(
      expect.arrayContaining(operationRoles.map(({ role, scope }) => ({ role: builtInRoles[role], scope, principalType: 'ServicePrincipal' }))),
    );
    expect(grants).toHaveLength(operationRoles.length);
  });

  it('refuses a scope it cannot grant at (one resource, the tenant root, anything but a subscription or a resource group), naming the entry and what to write instead', () => {
    const resourceScope = `${operationRoles[2].scope}/providers/Microsoft.Network/virtualNetworks/vnet/subnets/aci`;
    expect(() => deploy(mainTemplate(), { ...baseParameters, operationRoles: [operationRoles[0], { role: 'Network Contributor', scope: resourceScope }] })).toThrow(
      `The deployment fails: operationRoles[1] (Network Contributor): its scope '${resourceScope}' is neither a subscription nor a resource group. Write "/subscriptions/<subscription id>" or "/subscriptions/<subscription id>/resourceGroups/<resource group>"`,
    );
    for (const scope of ['/', '/providers/Microsoft.Management', '/subscriptions/11111111-1111-1111-1111-111111111111/', '/subscriptions/', '/subscriptions/11111111-1111-1111-1111-111111111111/providers/Microsoft.Network', 'subscriptions/11111111-1111-1111-1111-111111111111']) {
      expect(() => deploy(mainTemplate(), { ...baseParameters, operationRoles: [{ role: 'Service Health Security Reader', scope }] })).toThrow(/^The deployment fails: operationRoles\[0\] \(Service Health Security Reader\): its scope .* grant a narrower scope \(one resource\) or the tenant root after the deployment with az role assignment create/);
    }
  });

  it('refuses a role it does not know, or a misspelt or missing property, when the parameters are checked (the type of operationRoles), naming the entry', () => {
    expect(() => deploy(mainTemplate(), { ...baseParameters, operationRoles: [operationRoles[0], { role: 'Owner', scope: operationRoles[0].scope }] })).toThrow(
      /^The value of parameter operationRoles\[1\]\.role is not one of the allowed values \(.*"Reader".*\): Owner$/,
    );
    expect(() => deploy(mainTemplate(), { ...baseParameters, operationRoles: [{ role: 'Reader', scpoe: operationRoles[0].scope }] })).toThrow('The value of parameter operationRoles[0] has no scope, which it requires');
    expect(() => deploy(mainTemplate(), { ...baseParameters, operationRoles: [{ ...operationRoles[0], condition: 'x' }] })).toThrow('The value of parameter operationRoles[0] has the property condition, which its type does not allow (it allows role, scope)');
  });

  it('names in its type the roles it has a definition for, and no other', () => {
    const template = mainTemplate();
    const roleType = template.definitions?.[String(template.definitions?.operationRole?.properties?.role?.$ref).replace('#/definitions/', '')];
    expect([...(roleType?.allowedValues ?? [])].sort()).toEqual(Object.keys(template.variables?.operationRoleDefinitionIds as JsonObject).sort());
    expect(template.variables?.operationRoleDefinitionIds).toEqual(Object.fromEntries(operationRoles.map(({ role }) => [role, builtInRoles[role]])));
  });
});
