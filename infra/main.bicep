// The management gateway on Azure Functions Flex Consumption (Node 22), what `azd up` provisions
// (with main.bicepparam) and what `az deployment sub create` deploys: a resource group holding a
// user-assigned identity, storage without shared keys, Application Insights without local auth, a
// Key Vault for the app's secrets and the function app, each made by a module of modules/, and the
// role assignments the host and the app's operations need. main.json is this file compiled
// (`bicep build infra/main.bicep`), kept for the Deploy to Azure link and the portal; a test fails
// when it differs from what `bicep build` makes.
targetScope = 'subscription'

metadata description = 'The management gateway on Azure Functions Flex Consumption (Node 22): a user-assigned identity, storage without shared keys, Application Insights without local auth, a Key Vault for the app\'s secrets, and the role assignments the host and the app\'s operations need. Compiled from infra/main.bicep.'

import { operationRole, operationRoleDefinitionIds } from 'types.bicep'

@minLength(1)
@maxLength(64)
@description('Name of the azd environment: tags every resource and, with the subscription and location, seeds the resource names.')
param environmentName string

// Where Flex Consumption runs, as Azure-Samples/functions-quickstart-typescript-azd lists it for its
// `location` (infra/main.bicep at commit cba392291ff7b6c994548aabaa8c06eb4055be54), without
// eastus2euap, a canary region that ordinary subscriptions cannot deploy to. A region outside the
// list fails before anything is made, and azd offers only these, rather than failing at the plan
// once the resource group, storage and Key Vault exist. `az functionapp
// list-flexconsumption-locations` gives the current list.
@allowed([
  'australiaeast'
  'australiasoutheast'
  'brazilsouth'
  'canadacentral'
  'centralindia'
  'centralus'
  'eastasia'
  'eastus'
  'eastus2'
  'francecentral'
  'germanywestcentral'
  'italynorth'
  'japaneast'
  'koreacentral'
  'northcentralus'
  'northeurope'
  'norwayeast'
  'southafricanorth'
  'southcentralus'
  'southeastasia'
  'southindia'
  'spaincentral'
  'swedencentral'
  'uaenorth'
  'uksouth'
  'ukwest'
  'westcentralus'
  'westeurope'
  'westus'
  'westus2'
  'westus3'
])
@metadata({ azd: { type: 'location' } })
@description('Region of every resource: one where Flex Consumption runs.')
param location string

@description('Resource group to create. Empty: rg-<environmentName>.')
param resourceGroupName string = ''

@allowed([512, 2048, 4096])
@description('Memory of each Flex Consumption instance, in MB.')
param instanceMemoryMB int = 2048

@minValue(40)
@maxValue(1000)
@description('Most instances the app scales out to.')
param maximumInstanceCount int = 100

@description('Purge protection of the Key Vault (irreversible: a deleted vault and its secrets then stay for the whole retention period, and its name with them).')
param enablePurgeProtection bool = false

@description('The management endpoint the app calls: MANAGEMENT_BASE_URL. Empty: the Resource Manager of the cloud deployed to (https://management.azure.com in Azure\'s public cloud).')
param managementBaseUrl string = ''

@description('The lifecycle service of the certificate download (or a regional host): LIFECYCLE_BASE_URL.')
param lifecycleBaseUrl string = 'https://lcsapi.lcs.dynamics.com'

@description('Provider prefix the app serves: PROVIDER_NAMESPACE.')
param providerNamespace string = 'Microsoft'

@description('Name of the certificate API\'s version header: LIFECYCLE_VERSION_HEADER.')
param lifecycleVersionHeader string = 'x-ms-version'

@allowed(['managed', 'passthrough'])
@description('managed (the app\'s user-assigned identity) or passthrough (the caller\'s token): UPSTREAM_AUTH.')
param upstreamAuth string = 'managed'

@description('JSON array of scope prefixes the app may act in: ALLOWED_SCOPES. Empty: not set (no limit).')
param allowedScopes string = ''

@description('JSON rules of caller rights: ACCESS_POLICY. Empty: not set.')
param accessPolicy string = ''

@description('JSON array of certificate environments: CERT_ENVIRONMENTS. Empty: not set.')
param certEnvironments string = ''

@description('JSON array of origins x-gateway-notify may name: NOTIFY_ALLOWED_ORIGINS. Empty: not set.')
param notifyAllowedOrigins string = ''

@description('Tenant of the lifecycle user credential: LIFECYCLE_TENANT_ID. Empty: not set.')
param lifecycleTenantId string = ''

@description('Public client app of the lifecycle user credential: LIFECYCLE_CLIENT_ID. Empty: not set.')
param lifecycleClientId string = ''

@description('User of the lifecycle user credential: LIFECYCLE_USERNAME. Empty: not set.')
param lifecycleUsername string = ''

@description('The address callers use when something fronts the app: APP_PUBLIC_URL. Empty: not set.')
param appPublicUrl string = ''

// The secrets: an empty default means "none", so that the portal's form and an az deployment
// without them leave that feature off instead of asking for a value. Each given one is kept in the
// Key Vault, and its app setting refers to it.
@secure()
@description('Standard Webhooks key of the notifications (whsec_<base64>): NOTIFY_SIGNING_SECRET. Empty: no secret, no setting. Kept in the Key Vault; the app setting refers to it.')
param notifySigningSecret string = ''

@secure()
@description('Password of the lifecycle user credential of the certificate timer: LIFECYCLE_PASSWORD. Empty: no secret, no setting. Kept in the Key Vault; the app setting refers to it.')
param lifecyclePassword string = ''

@secure()
@description('The Slack app\'s signing secret: SLACK_SIGNING_SECRET. Empty: no secret, no setting (the Slack route answers 404). Kept in the Key Vault; the app setting refers to it.')
param slackSigningSecret string = ''

@secure()
@description('The Teams outgoing webhook\'s security token: TEAMS_WEBHOOK_SECRET. Empty: no secret, no setting (the Teams route answers 404). Kept in the Key Vault; the app setting refers to it.')
param teamsWebhookSecret string = ''

@secure()
@description('The Slack incoming webhook of the approvers\' channel (its URL holds a secret in its path): SLACK_APPROVAL_WEBHOOK_URL. Empty: no secret, no setting (no approval message is posted to Slack). Kept in the Key Vault; the app setting refers to it.')
param slackApprovalWebhookUrl string = ''

@description('Roles the app\'s identity gets for the operations it calls (the table of docs/deploy.md): [{ "role": "<role>", "scope": "/subscriptions/<id>" or "/subscriptions/<id>/resourceGroups/<name>" }]. A narrower scope (one resource) or the tenant root: az role assignment create after the deployment.')
param operationRoles operationRole[] = []

var resourceToken = toLower(uniqueString(subscription().id, environmentName, location))
// azd finds the environment's resources by this tag (and the app by azd-service-name, modules/app.bicep).
var tags = { 'azd-env-name': environmentName }
var deploymentContainerName = 'app-package'
// The app's containers carry the names src/settings/config.ts defaults to.
var containers = ['gateway-orchestrations', 'gateway-certificates', 'gateway-certificate-secrets', deploymentContainerName]

var settings = {
  // The cloud's own Resource Manager unless told otherwise (the app drops its trailing slash).
  MANAGEMENT_BASE_URL: empty(managementBaseUrl) ? environment().resourceManager : managementBaseUrl
  LIFECYCLE_BASE_URL: lifecycleBaseUrl
  PROVIDER_NAMESPACE: providerNamespace
  LIFECYCLE_VERSION_HEADER: lifecycleVersionHeader
  UPSTREAM_AUTH: upstreamAuth
  ALLOWED_SCOPES: allowedScopes
  ACCESS_POLICY: accessPolicy
  CERT_ENVIRONMENTS: certEnvironments
  NOTIFY_ALLOWED_ORIGINS: notifyAllowedOrigins
  LIFECYCLE_TENANT_ID: lifecycleTenantId
  LIFECYCLE_CLIENT_ID: lifecycleClientId
  LIFECYCLE_USERNAME: lifecycleUsername
  APP_PUBLIC_URL: appPublicUrl
}

// Each secret: its app setting and its name in the vault, and whether one was given.
var secrets = [
  { setting: 'NOTIFY_SIGNING_SECRET', secretName: 'notify-signing-secret', given: !empty(notifySigningSecret) }
  { setting: 'LIFECYCLE_PASSWORD', secretName: 'lifecycle-password', given: !empty(lifecyclePassword) }
  { setting: 'SLACK_SIGNING_SECRET', secretName: 'slack-signing-secret', given: !empty(slackSigningSecret) }
  { setting: 'TEAMS_WEBHOOK_SECRET', secretName: 'teams-webhook-secret', given: !empty(teamsWebhookSecret) }
  { setting: 'SLACK_APPROVAL_WEBHOOK_URL', secretName: 'slack-approval-webhook-url', given: !empty(slackApprovalWebhookUrl) }
]

// operationRoles' scopes, read as ['', 'subscriptions', <id>] or ['', 'subscriptions', <id>,
// 'resourceGroups', <name>]. Any other scope fails the deployment while it is validated, before
// anything is made, with a message that names the entry and what to write instead.
var scopeSegments = [for grant in operationRoles: split(grant.scope, '/')]
var scopeKinds = [
  for segments in scopeSegments: length(segments) == 3
    ? (empty(segments[0]) && toLower(segments[1]) == 'subscriptions' && !empty(segments[2]) ? 'subscription' : 'other')
    : length(segments) == 5
        ? (empty(segments[0]) && toLower(segments[1]) == 'subscriptions' && !empty(segments[2]) && toLower(segments[3]) == 'resourcegroups' && !empty(segments[4])
            ? 'resourceGroup'
            : 'other')
        : 'other'
]
var operationGrants = [
  for (grant, index) in operationRoles: scopeKinds[index] == 'other'
    ? fail('operationRoles[${index}] (${grant.role}): its scope \'${grant.scope}\' is neither a subscription nor a resource group. Write "/subscriptions/<subscription id>" or "/subscriptions/<subscription id>/resourceGroups/<resource group>"; grant a narrower scope (one resource) or the tenant root after the deployment with az role assignment create --assignee-object-id <AZURE_IDENTITY_PRINCIPAL_ID> --assignee-principal-type ServicePrincipal --role \'${grant.role}\' --scope \'${grant.scope}\' (docs/deploy.md).')
    : {
        roleDefinitionGuid: operationRoleDefinitionIds[grant.role]
        subscriptionId: scopeSegments[index][2]
        resourceGroup: scopeKinds[index] == 'resourceGroup' ? scopeSegments[index][4] : ''
      }
]

resource group 'Microsoft.Resources/resourceGroups@2024-11-01' = {
  name: empty(resourceGroupName) ? 'rg-${environmentName}' : resourceGroupName
  location: location
  tags: tags
  properties: {}
}

module identity 'modules/identity.bicep' = {
  name: 'identity'
  scope: group
  params: {
    name: 'id-${resourceToken}'
    location: location
    tags: tags
  }
}

module storage 'modules/storage.bicep' = {
  name: 'storage'
  scope: group
  params: {
    name: 'st${resourceToken}'
    location: location
    tags: tags
    containers: containers
  }
}

module monitoring 'modules/monitoring.bicep' = {
  name: 'monitoring'
  scope: group
  params: {
    logAnalyticsName: 'log-${resourceToken}'
    applicationInsightsName: 'appi-${resourceToken}'
    location: location
    tags: tags
  }
}

module keyVault 'modules/keyVault.bicep' = {
  name: 'keyVault'
  scope: group
  params: {
    name: 'kv-${resourceToken}'
    location: location
    tags: tags
    enablePurgeProtection: enablePurgeProtection
    secretValues: {
      'notify-signing-secret': notifySigningSecret
      'lifecycle-password': lifecyclePassword
      'slack-signing-secret': slackSigningSecret
      'teams-webhook-secret': teamsWebhookSecret
      'slack-approval-webhook-url': slackApprovalWebhookUrl
    }
  }
}

module hostRoles 'modules/hostRoles.bicep' = {
  name: 'hostRoles'
  scope: group
  params: {
    principalId: identity.outputs.principalId
    storageAccountName: storage.outputs.name
    applicationInsightsName: monitoring.outputs.name
    keyVaultName: keyVault.outputs.name
  }
}

module app 'modules/app.bicep' = {
  name: 'app'
  scope: group
  // The site reads its package from storage with the identity, and its Key Vault references with
  // it too: the roles come first.
  dependsOn: [hostRoles]
  params: {
    name: 'func-${resourceToken}'
    planName: 'plan-${resourceToken}'
    location: location
    tags: tags
    identityName: identity.outputs.name
    storageAccountName: storage.outputs.name
    deploymentContainerName: deploymentContainerName
    applicationInsightsName: monitoring.outputs.name
    instanceMemoryMB: instanceMemoryMB
    maximumInstanceCount: maximumInstanceCount
    settings: settings
    keyVaultUri: keyVault.outputs.uri
    secretSettings: map(filter(secrets, secret => secret.given), secret => { setting: secret.setting, secretName: secret.secretName })
  }
}

// Roles at other scopes are deployed there: named after the environment, as other environments
// may grant at the same subscription or resource group.
module subscriptionRoles 'modules/subscriptionRole.bicep' = [
  for (grant, index) in filter(operationGrants, grant => empty(grant.resourceGroup)): {
    name: '${resourceToken}-role-sub-${index}'
    scope: subscription(grant.subscriptionId)
    params: {
      principalId: identity.outputs.principalId
      roleDefinitionGuid: grant.roleDefinitionGuid
    }
  }
]

module resourceGroupRoles 'modules/resourceGroupRole.bicep' = [
  for (grant, index) in filter(operationGrants, grant => !empty(grant.resourceGroup)): {
    name: '${resourceToken}-role-rg-${index}'
    scope: resourceGroup(grant.subscriptionId, grant.resourceGroup)
    params: {
      principalId: identity.outputs.principalId
      roleDefinitionGuid: grant.roleDefinitionGuid
    }
  }
]

// What azd keeps in the environment (.azure/<env>/.env): names and ids, never a secret.
output AZURE_LOCATION string = location
output AZURE_TENANT_ID string = tenant().tenantId
output AZURE_RESOURCE_GROUP string = group.name
output AZURE_FUNCTION_APP_NAME string = app.outputs.name
output SERVICE_API_NAME string = app.outputs.name
output SERVICE_API_URI string = 'https://${app.outputs.hostName}/api'
output AZURE_FUNCTION_APP_HOSTNAME string = app.outputs.hostName
output AZURE_IDENTITY_CLIENT_ID string = identity.outputs.clientId
output AZURE_IDENTITY_PRINCIPAL_ID string = identity.outputs.principalId
output AZURE_KEY_VAULT_NAME string = keyVault.outputs.name
output AZURE_KEY_VAULT_URI string = keyVault.outputs.uri
output AZURE_STORAGE_ACCOUNT_NAME string = storage.outputs.name
output AZURE_APPLICATION_INSIGHTS_NAME string = monitoring.outputs.name
