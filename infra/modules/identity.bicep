// The app's user-assigned identity: storage, Key Vault, Application Insights and (UPSTREAM_AUTH=managed)
// the management calls all sign in with it. User-assigned rather than the site's own so that its
// roles exist before the site does (the site reads its package with it when it is created).

param name string
param location string
param tags object

resource identity 'Microsoft.ManagedIdentity/userAssignedIdentities@2024-11-30' = {
  name: name
  location: location
  tags: tags
  properties: {}
}

output id string = identity.id
output name string = identity.name
output clientId string = identity.properties.clientId
output principalId string = identity.properties.principalId
