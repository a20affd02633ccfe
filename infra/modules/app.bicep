// The Flex Consumption plan and function app on Node 22: HTTPS only, FTP and basic publishing
// credentials off, the package read from blob storage with the identity, and the app settings:
// the host's (storage and Application Insights through the identity), the app's own, and a Key
// Vault reference for each secret given. No setting names the runtime, its version or a build:
// Flex Consumption keeps those in functionAppConfig and rejects them as settings.

param name string
param planName string
param location string
param tags object
param identityName string
param storageAccountName string
param deploymentContainerName string
param applicationInsightsName string
param instanceMemoryMB int
param maximumInstanceCount int

@description('The app\'s own settings by name (src/settings/config.ts); one with an empty value is left out.')
param settings object

@description('The vault\'s URI, ending in a slash.')
param keyVaultUri string

@description('The settings whose value is a secret of the vault: each its setting and the secret\'s name (names only, never a value).')
param secretSettings { setting: string, secretName: string }[]

resource identity 'Microsoft.ManagedIdentity/userAssignedIdentities@2024-11-30' existing = {
  name: identityName
}

resource storage 'Microsoft.Storage/storageAccounts@2025-01-01' existing = {
  name: storageAccountName
}

resource applicationInsights 'Microsoft.Insights/components@2020-02-02' existing = {
  name: applicationInsightsName
}

var hostSettings = [
  // The Functions host's own storage, identity-based ("Connecting to host storage with an identity").
  { name: 'AzureWebJobsStorage__accountName', value: storage.name }
  { name: 'AzureWebJobsStorage__credential', value: 'managedidentity' }
  { name: 'AzureWebJobsStorage__clientId', value: identity.properties.clientId }
  // DefaultAzureCredential's user-assigned identity (UPSTREAM_AUTH=managed).
  { name: 'AZURE_CLIENT_ID', value: identity.properties.clientId }
  // The host's logs, signed in with the identity as local authentication is off.
  { name: 'APPLICATIONINSIGHTS_AUTHENTICATION_STRING', value: 'ClientId=${identity.properties.clientId};Authorization=AAD' }
  { name: 'APPLICATIONINSIGHTS_CONNECTION_STRING', value: applicationInsights.properties.ConnectionString }
]
var ownSettings = filter(map(items(settings), setting => { name: setting.key, value: setting.value }), setting => !empty(setting.value))
var secretReferences = map(secretSettings, secret => {
  name: secret.setting
  value: '@Microsoft.KeyVault(SecretUri=${keyVaultUri}secrets/${secret.secretName})'
})

resource plan 'Microsoft.Web/serverfarms@2024-11-01' = {
  name: planName
  location: location
  tags: tags
  kind: 'functionapp'
  sku: {
    name: 'FC1'
    tier: 'FlexConsumption'
  }
  properties: {
    reserved: true
  }
}

resource site 'Microsoft.Web/sites@2024-11-01' = {
  name: name
  location: location
  // azd deploys the service `api` of azure.yaml to the site that carries its name.
  tags: union(tags, { 'azd-service-name': 'api' })
  kind: 'functionapp,linux'
  identity: {
    type: 'UserAssigned'
    userAssignedIdentities: {
      '${identity.id}': {}
    }
  }
  properties: {
    serverFarmId: plan.id
    httpsOnly: true
    keyVaultReferenceIdentity: identity.id
    functionAppConfig: {
      deployment: {
        storage: {
          type: 'blobContainer'
          value: '${storage.properties.primaryEndpoints.blob}${deploymentContainerName}'
          authentication: {
            type: 'UserAssignedIdentity'
            userAssignedIdentityResourceId: identity.id
          }
        }
      }
      scaleAndConcurrency: {
        instanceMemoryMB: instanceMemoryMB
        maximumInstanceCount: maximumInstanceCount
      }
      runtime: {
        name: 'node'
        version: '22'
      }
    }
    siteConfig: {
      minTlsVersion: '1.2'
      appSettings: concat(hostSettings, ownSettings, secretReferences)
    }
  }
}

// FTP and the SCM site's basic (user name and password) publishing credentials: off.
resource ftpCredentials 'Microsoft.Web/sites/basicPublishingCredentialsPolicies@2024-11-01' = {
  parent: site
  name: 'ftp'
  properties: {
    allow: false
  }
}

resource scmCredentials 'Microsoft.Web/sites/basicPublishingCredentialsPolicies@2024-11-01' = {
  parent: site
  name: 'scm'
  properties: {
    allow: false
  }
}

output name string = site.name
output hostName string = site.properties.defaultHostName
