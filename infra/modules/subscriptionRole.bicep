// One entry of operationRoles whose scope is a subscription: main.bicep deploys this module there.
// (A resource group's entry is resourceGroupRole.bicep: a role assignment is made by a template
// deployed at its own scope.)
targetScope = 'subscription'

param principalId string
param roleDefinitionGuid string

resource assignment 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(subscription().id, principalId, roleDefinitionGuid)
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roleDefinitionGuid)
    principalId: principalId
    principalType: 'ServicePrincipal'
  }
}
