// The Key Vault that holds the app's secrets (Azure RBAC, no access policies): the app settings
// refer to them (@Microsoft.KeyVault(SecretUri=...)), resolved with the identity.

param name string
param location string
param tags object

@description('Irreversible: a deleted vault and its secrets then stay for the whole retention period, and its name with them.')
param enablePurgeProtection bool

@secure()
@description('Each secret by its name in the vault; an empty one is not made.')
param secretValues object

resource vault 'Microsoft.KeyVault/vaults@2024-11-01' = {
  name: name
  location: location
  tags: tags
  properties: {
    tenantId: subscription().tenantId
    sku: {
      family: 'A'
      name: 'standard'
    }
    enableRbacAuthorization: true
    enableSoftDelete: true
    // Only `true` is accepted once set, and `false` is refused: left out unless asked for.
    enablePurgeProtection: enablePurgeProtection ? true : null
    publicNetworkAccess: 'Enabled'
  }
}

resource secrets 'Microsoft.KeyVault/vaults/secrets@2024-11-01' = [
  for secret in items(secretValues): if (!empty(secret.value)) {
    parent: vault
    name: secret.key
    properties: {
      value: secret.value
    }
  }
]

output name string = vault.name
output uri string = vault.properties.vaultUri
