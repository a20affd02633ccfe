/**
 * The app settings infra/main.json (compiled from infra/main.bicep) sets, both ways: each is one the app reads (the schema of
 * src/settings/config.ts) or one the Functions host or @azure/identity reads itself, and the app starts on
 * them in Azure (src/settings/config.ts parses them, with the values only the deployment knows filled in).
 */
import { parseConfig, settingNames } from '../../../src/settings/config';
import { appSettingsOf, deploy, type JsonObject, mainTemplate, requiredParameters, secrets } from './armTemplate';

/** Read by the platform, not (only) by the app's own settings schema. */
const platformSettings = [
  // The Functions host's own storage, identity-based ("Connecting to host storage with an identity").
  'AzureWebJobsStorage__accountName',
  'AzureWebJobsStorage__credential',
  'AzureWebJobsStorage__clientId',
  // The host's logs to Application Insights, and how it signs in there with local auth off.
  'APPLICATIONINSIGHTS_CONNECTION_STRING',
  'APPLICATIONINSIGHTS_AUTHENTICATION_STRING',
  // DefaultAzureCredential's user-assigned identity (UPSTREAM_AUTH=managed, docs/deploy.md).
  'AZURE_CLIENT_ID',
];

const required = requiredParameters;

/** Each optional setting given a value the app accepts, so that every setting the template can set is set. */
const everything = {
  ...required,
  allowedScopes: '["/subscriptions/00000000-0000-0000-0000-000000000000"]',
  accessPolicy: '[{"callers":["key:0123456789ab"],"allow":["read"]}]',
  certEnvironments: '[{"projectId":1234567,"environmentId":"00000000-0000-0000-0000-000000000000"}]',
  notifyAllowedOrigins: '["https://hooks.example.com"]',
  lifecycleTenantId: 'tenant',
  lifecycleClientId: 'client',
  lifecycleUsername: 'user',
  appPublicUrl: 'https://gw.contoso.com/api',
  notifySigningSecret: `whsec_${Buffer.alloc(32, 7).toString('base64')}`,
  lifecyclePassword: 'password',
  slackSigningSecret: 'slack-signing-secret-0001',
  teamsWebhookSecret: Buffer.alloc(32, 9).toString('base64'),
  slackApprovalWebhookUrl: 'https://hooks.slack.com/services/T0000/B0000/approvals-0001',
};

/** The app's environment in Azure: Key Vault references resolved (to the secret the parameter gave) and what the deployment makes filled in. */
function environmentInAzure(settings: Map<string, string>, parameters: JsonObject): Record<string, string> {
  const clientId = '11111111-2222-3333-4444-555555555555';
  const resolved = [...settings].map(([name, value]) => [
    name,
    value.startsWith('@Microsoft.KeyVault(')
      ? String(parameters[secrets.find(({ setting }) => setting === name)!.parameter])
      : value
          .replace(/\{reference\([^)]*userAssignedIdentities[^)]*\)\.clientId\}/g, clientId)
          .replace(/\{reference\([^)]*Microsoft\.Insights\/components[^)]*\)\.ConnectionString\}/g, `InstrumentationKey=${clientId};IngestionEndpoint=https://westus3-1.in.applicationinsights.azure.com/`),
  ]);
  if (resolved.some(([, value]) => value!.includes('{reference('))) throw new Error(`A setting still holds a value only the deployment knows: ${JSON.stringify(resolved)}`);
  // Set by the platform on every instance.
  return { ...Object.fromEntries(resolved), WEBSITE_INSTANCE_ID: 'instance' };
}

describe('the app settings of infra/main.json', () => {
  const all = appSettingsOf(deploy(mainTemplate(), everything));
  const defaults = appSettingsOf(deploy(mainTemplate(), required));

  it('are each read by the app (src/settings/config.ts) or by the platform', () => {
    const read = new Set([...settingNames, ...platformSettings]);
    expect([...all.keys()].filter((name) => !read.has(name))).toEqual([]);
  });

  it('include identity-based storage the app reads itself, as the host does (src/settings/config.ts declares them)', () => {
    expect(settingNames).toEqual(expect.arrayContaining(['AzureWebJobsStorage__accountName', 'AzureWebJobsStorage__credential', 'AzureWebJobsStorage__clientId', 'APPLICATIONINSIGHTS_AUTHENTICATION_STRING']));
    expect([...defaults.keys()]).toEqual(expect.arrayContaining(['AzureWebJobsStorage__accountName', 'AzureWebJobsStorage__credential', 'AzureWebJobsStorage__clientId']));
  });

  it('set what the app requires with no default of its own, with the template defaults alone (the management endpoint: the cloud deployed to)', () => {
    // environment().resourceManager, which ends in a slash that the app drops.
    expect(Object.fromEntries(defaults)).toMatchObject({ MANAGEMENT_BASE_URL: 'https://management.azure.com/', LIFECYCLE_BASE_URL: 'https://lcsapi.lcs.dynamics.com', PROVIDER_NAMESPACE: 'Microsoft', UPSTREAM_AUTH: 'managed' });
    expect(parseConfig(environmentInAzure(defaults, required))).toMatchObject({ MANAGEMENT_BASE_URL: 'https://management.azure.com', LIFECYCLE_BASE_URL: 'https://lcsapi.lcs.dynamics.com' });
    expect(appSettingsOf(deploy(mainTemplate(), { ...required, managementBaseUrl: 'https://management.example.test' })).get('MANAGEMENT_BASE_URL')).toBe('https://management.example.test');
  });

  it('leave out each optional setting whose parameter is empty, and set it when it is not', () => {
    const optional = ['ALLOWED_SCOPES', 'ACCESS_POLICY', 'CERT_ENVIRONMENTS', 'NOTIFY_ALLOWED_ORIGINS', 'LIFECYCLE_TENANT_ID', 'LIFECYCLE_CLIENT_ID', 'LIFECYCLE_USERNAME', 'LIFECYCLE_PASSWORD', 'APP_PUBLIC_URL', 'NOTIFY_SIGNING_SECRET', 'SLACK_SIGNING_SECRET', 'TEAMS_WEBHOOK_SECRET', 'SLACK_APPROVAL_WEBHOOK_URL'];
    expect(optional.filter((name) => defaults.has(name))).toEqual([]);
    expect(optional.filter((name) => !all.has(name))).toEqual([]);
    expect([...all.values()].filter((value) => value === '')).toEqual([]);
  });

  it.each([
    ['the defaults', required, defaults],
    ['every setting set', everything, all],
  ])('start the app in Azure with %s (src/settings/config.ts accepts them)', (_, parameters, settings) => {
    expect(() => parseConfig(environmentInAzure(settings, parameters))).not.toThrow();
  });
});
