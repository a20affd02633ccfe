// Log Analytics and Application Insights with local authentication off: the host and the app's own
// exporter sign in with the identity (APPLICATIONINSIGHTS_AUTHENTICATION_STRING), never with a key.

param logAnalyticsName string
param applicationInsightsName string
param location string
param tags object

resource logAnalytics 'Microsoft.OperationalInsights/workspaces@2023-09-01' = {
  name: logAnalyticsName
  location: location
  tags: tags
  properties: {
    sku: {
      name: 'PerGB2018'
    }
    retentionInDays: 30
    features: {
      disableLocalAuth: true
    }
  }
}

resource applicationInsights 'Microsoft.Insights/components@2020-02-02' = {
  name: applicationInsightsName
  location: location
  tags: tags
  kind: 'web'
  properties: {
    Application_Type: 'web'
    WorkspaceResourceId: logAnalytics.id
    IngestionMode: 'LogAnalytics'
    DisableLocalAuth: true
  }
}

output name string = applicationInsights.name
// Not a secret: with local authentication off, the instrumentation key in it lets nobody write.
output connectionString string = applicationInsights.properties.ConnectionString
