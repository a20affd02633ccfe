// The template azd provisions (`azd provision`, `azd up`): infra/main.json, an ARM template, does the
// work; this file only passes its parameters through and hands its outputs back to azd, which keeps
// them in the environment (.azure/<env>/.env). Keep it mechanical: every parameter of main.json,
// with the same name, type and default, and every output (test/unit/infra/azd.test.ts).
targetScope = 'subscription'

param environmentName string
@metadata({ azd: { type: 'location' } })
param location string
param resourceGroupName string = ''
param instanceMemoryMB int = 2048
param maximumInstanceCount int = 100
param enablePurgeProtection bool = false
param managementBaseUrl string = 'https://management.azure.com'
param lifecycleBaseUrl string = 'https://lcsapi.lcs.dynamics.com'
param providerNamespace string = 'Microsoft'
param lifecycleVersionHeader string = 'x-ms-version'
param upstreamAuth string = 'managed'
param allowedScopes string = ''
param accessPolicy string = ''
param certEnvironments string = ''
param notifyAllowedOrigins string = ''
param lifecycleTenantId string = ''
param lifecycleClientId string = ''
param lifecycleUsername string = ''
param appPublicUrl string = ''
@secure()
param notifySigningSecret string = ''
@secure()
param lifecyclePassword string = ''
@secure()
param slackSigningSecret string = ''
@secure()
param teamsWebhookSecret string = ''
@secure()
param slackApprovalWebhookUrl string = ''
param operationRoles array = []

module app 'main.json' = {
  name: take('gateway-${environmentName}', 64)
  params: {
    environmentName: environmentName
    location: location
    resourceGroupName: resourceGroupName
    instanceMemoryMB: instanceMemoryMB
    maximumInstanceCount: maximumInstanceCount
    enablePurgeProtection: enablePurgeProtection
    managementBaseUrl: managementBaseUrl
    lifecycleBaseUrl: lifecycleBaseUrl
    providerNamespace: providerNamespace
    lifecycleVersionHeader: lifecycleVersionHeader
    upstreamAuth: upstreamAuth
    allowedScopes: allowedScopes
    accessPolicy: accessPolicy
    certEnvironments: certEnvironments
    notifyAllowedOrigins: notifyAllowedOrigins
    lifecycleTenantId: lifecycleTenantId
    lifecycleClientId: lifecycleClientId
    lifecycleUsername: lifecycleUsername
    appPublicUrl: appPublicUrl
    notifySigningSecret: notifySigningSecret
    lifecyclePassword: lifecyclePassword
    slackSigningSecret: slackSigningSecret
    teamsWebhookSecret: teamsWebhookSecret
    slackApprovalWebhookUrl: slackApprovalWebhookUrl
    operationRoles: operationRoles
  }
}

output AZURE_LOCATION string = app.outputs.AZURE_LOCATION
output AZURE_TENANT_ID string = app.outputs.AZURE_TENANT_ID
output AZURE_RESOURCE_GROUP string = app.outputs.AZURE_RESOURCE_GROUP
output AZURE_FUNCTION_APP_NAME string = app.outputs.AZURE_FUNCTION_APP_NAME
output SERVICE_API_NAME string = app.outputs.SERVICE_API_NAME
output SERVICE_API_URI string = app.outputs.SERVICE_API_URI
output AZURE_FUNCTION_APP_HOSTNAME string = app.outputs.AZURE_FUNCTION_APP_HOSTNAME
output AZURE_IDENTITY_CLIENT_ID string = app.outputs.AZURE_IDENTITY_CLIENT_ID
output AZURE_IDENTITY_PRINCIPAL_ID string = app.outputs.AZURE_IDENTITY_PRINCIPAL_ID
output AZURE_KEY_VAULT_NAME string = app.outputs.AZURE_KEY_VAULT_NAME
output AZURE_KEY_VAULT_URI string = app.outputs.AZURE_KEY_VAULT_URI
output AZURE_STORAGE_ACCOUNT_NAME string = app.outputs.AZURE_STORAGE_ACCOUNT_NAME
output AZURE_APPLICATION_INSIGHTS_NAME string = app.outputs.AZURE_APPLICATION_INSIGHTS_NAME
