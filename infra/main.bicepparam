// What azd provisions with (`azd provision`, `azd up`): each parameter of main.bicep from the azd
// environment variable of its name (`azd env set NAME value`), the template's default when it is
// not set. A Bicep parameters file rather than a main.parameters.json
// because azd pastes a variable's value into that JSON file's text before parsing it: a JSON-valued
// setting (ALLOWED_SCOPES, ACCESS_POLICY, OPERATION_ROLES, ...) or a secret holding a quote would
// break it. test/unit/infra/azd.test.ts checks this file against main.bicep's parameters.
using 'main.bicep'

param environmentName = readEnvironmentVariable('AZURE_ENV_NAME')
param location = readEnvironmentVariable('AZURE_LOCATION')
param resourceGroupName = readEnvironmentVariable('AZURE_RESOURCE_GROUP', '')
// any(): int() of the variable's text is an int to the compiler, not one of the @allowed sizes;
// Resource Manager checks it against them when the deployment is validated.
param instanceMemoryMB = any(int(readEnvironmentVariable('INSTANCE_MEMORY_MB', '2048')))
param maximumInstanceCount = int(readEnvironmentVariable('MAXIMUM_INSTANCE_COUNT', '100'))
param enablePurgeProtection = bool(readEnvironmentVariable('ENABLE_PURGE_PROTECTION', 'false'))
param managementBaseUrl = readEnvironmentVariable('MANAGEMENT_BASE_URL', '')
param lifecycleBaseUrl = readEnvironmentVariable('LIFECYCLE_BASE_URL', 'https://lcsapi.lcs.dynamics.com')
param providerNamespace = readEnvironmentVariable('PROVIDER_NAMESPACE', 'Microsoft')
param lifecycleVersionHeader = readEnvironmentVariable('LIFECYCLE_VERSION_HEADER', 'x-ms-version')
param upstreamAuth = readEnvironmentVariable('UPSTREAM_AUTH', 'managed')
param allowedScopes = readEnvironmentVariable('ALLOWED_SCOPES', '')
param accessPolicy = readEnvironmentVariable('ACCESS_POLICY', '')
param certEnvironments = readEnvironmentVariable('CERT_ENVIRONMENTS', '')
param notifyAllowedOrigins = readEnvironmentVariable('NOTIFY_ALLOWED_ORIGINS', '')
param lifecycleTenantId = readEnvironmentVariable('LIFECYCLE_TENANT_ID', '')
param lifecycleClientId = readEnvironmentVariable('LIFECYCLE_CLIENT_ID', '')
param lifecycleUsername = readEnvironmentVariable('LIFECYCLE_USERNAME', '')
param appPublicUrl = readEnvironmentVariable('APP_PUBLIC_URL', '')
param notifySigningSecret = readEnvironmentVariable('NOTIFY_SIGNING_SECRET', '')
param lifecyclePassword = readEnvironmentVariable('LIFECYCLE_PASSWORD', '')
param slackSigningSecret = readEnvironmentVariable('SLACK_SIGNING_SECRET', '')
param teamsWebhookSecret = readEnvironmentVariable('TEAMS_WEBHOOK_SECRET', '')
param slackApprovalWebhookUrl = readEnvironmentVariable('SLACK_APPROVAL_WEBHOOK_URL', '')
param operationRoles = json(readEnvironmentVariable('OPERATION_ROLES', '[]'))
