// What main.bicep shares with its modules and tests: the roles of the app's operations
// (docs/deploy.md, "Managed identity and roles") and their built-in definitions.

// The built-in roles by the GUIDs Microsoft publishes ("Azure built-in roles"); the union type below
// names the same roles, so a role not here fails when the parameters are checked, naming the entry.
@export()
var operationRoleDefinitionIds = {
  Reader: 'acdd72a7-3385-48ef-bd42-f606fba81ae7'
  'Azure Container Instances Contributor Role': '5d977122-f97e-4b4d-a52f-6b43003ddb4d'
  'Network Contributor': '4d97b98b-1d4f-4787-a291-c67834d212e7'
  'Managed Identity Operator': 'f1a07417-d97a-45cb-824c-7a7467783830'
  'Service Health Security Reader': '1a928ab0-1fee-43cf-9266-f9d8c22a8ddb'
  'Azure Event Hubs Data Owner': 'f526a384-b230-433a-b45c-95f59c4a2dec'
  'API Management Service Contributor': '312a565d-c81f-4fd8-895a-4e21e48d571c'
}

@export()
@description('A role of the table of docs/deploy.md, "Managed identity and roles".')
type operationRoleName =
  | 'Reader'
  | 'Azure Container Instances Contributor Role'
  | 'Network Contributor'
  | 'Managed Identity Operator'
  | 'Service Health Security Reader'
  | 'Azure Event Hubs Data Owner'
  | 'API Management Service Contributor'

// Sealed: a misspelt property ("scpoe") is refused rather than ignored.
@export()
@sealed()
@description('A role the app\'s identity gets, and where.')
type operationRole = {
  @description('The built-in role.')
  role: operationRoleName

  @description('Where it is granted: /subscriptions/<subscription id> or /subscriptions/<subscription id>/resourceGroups/<resource group>. A narrower scope (one resource) or the tenant root: az role assignment create after the deployment.')
  scope: string
}
