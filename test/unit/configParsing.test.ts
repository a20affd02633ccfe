/** Settings are parsed once; a bad value names every bad setting and what it accepts. */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parse } from 'jsonc-parser';
import { ConfigError, parseConfig } from '../../src/settings/config';

function problemsOf(settings: Record<string, string>): string[] {
  try {
    parseConfig(settings);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

const minimal = { MANAGEMENT_BASE_URL: 'https://management.example.com/', LIFECYCLE_BASE_URL: 'https://lcs.example.com' };

describe('parseConfig', () => {
  it('applies the documented defaults', () => {
    const config = parseConfig(minimal);
    expect(config).toMatchObject({
      PORT: 7071,
      MANAGEMENT_BASE_URL: 'https://management.example.com',
      PROVIDER_NAMESPACE: 'Vendor',
      GATEWAY_PROPERTY_PREFIX: 'Vendor.WindowsAzure.ApiManagement.Gateway',
      LIFECYCLE_VERSION_HEADER: 'x-vendor-version',
      UPSTREAM_AUTH: 'managed',
      storage: { kind: 'connectionString', connectionString: 'UseDevelopmentStorage=true' },
      CERT_ENVIRONMENTS: [],
      CERT_REFRESH_SCHEDULE: '0 0 */6 * * *',
      CERT_RENEW_BEFORE_DAYS: 14,
      CERT_ALERT_DAYS: 7,
      ORCHESTRATION_POLL_SCHEDULE: '*/10 * * * * *',
      managementTokenScope: 'https://management.example.com/.default',
      lifecycleTokenScope: 'https://lcs.example.com//.default',
    });
    expect(config.ALLOWED_SCOPES).toBeUndefined();
  });

  it('derives the gateway prefix from the namespace and reads JSON settings', () => {
    const config = parseConfig({
      ...minimal,
      PROVIDER_NAMESPACE: 'Microsoft',
      ALLOWED_SCOPES: '["/subscriptions/abc"]',
      CERT_ENVIRONMENTS: '[{"projectId": 7, "environmentId": "6f1a2b3c-1234-4abc-9def-0123456789ab"}]',
    });
    expect(config.GATEWAY_PROPERTY_PREFIX).toBe('Microsoft.WindowsAzure.ApiManagement.Gateway');
    expect(config.ALLOWED_SCOPES).toEqual(['/subscriptions/abc']);
    expect(config.CERT_ENVIRONMENTS).toEqual([{ projectId: 7, environmentId: '6f1a2b3c-1234-4abc-9def-0123456789ab' }]);
  });

  it('names every bad setting in one error', () => {
    let caught: unknown;
    try {
      parseConfig({ LIFECYCLE_BASE_URL: 'ftp://x', UPSTREAM_AUTH: 'magic', CERT_REFRESH_SCHEDULE: '0 * * * *', ALLOWED_SCOPES: 'not json', PORT: 'eighty' });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    const names = (caught as ConfigError).problems.map((problem) => problem.split(' ')[0]);
    expect(names.sort()).toEqual(['ALLOWED_SCOPES', 'CERT_REFRESH_SCHEDULE', 'LIFECYCLE_BASE_URL', 'MANAGEMENT_BASE_URL', 'PORT', 'UPSTREAM_AUTH']);
    expect((caught as ConfigError).message).toMatch(/MANAGEMENT_BASE_URL is required/);
  });

  it.each<[string, Record<string, string>, RegExp]>([
    [
      'a storage endpoint that is not a URL',
      { AzureWebJobsStorage: 'DefaultEndpointsProtocol=https;AccountName=a;AccountKey=a2V5;BlobEndpoint=not a url' },
      /^AzureWebJobsStorage .*BlobEndpoint/,
    ],
    [
      'a storage connection string without a key',
      { AzureWebJobsStorage: 'AccountName=a' },
      /^AzureWebJobsStorage needs DefaultEndpointsProtocol, AccountName and AccountKey/,
    ],
    // The SDK reads names case-sensitively and needs a protocol to tell an account string from a SAS one.
    [
      'an account string without DefaultEndpointsProtocol',
      { AzureWebJobsStorage: 'AccountName=a;AccountKey=YQ==' },
      /^AzureWebJobsStorage needs DefaultEndpointsProtocol/,
    ],
    [
      'an account string without EndpointSuffix or BlobEndpoint',
      { AzureWebJobsStorage: 'DefaultEndpointsProtocol=https;AccountName=a;AccountKey=YQ==' },
      /^AzureWebJobsStorage needs EndpointSuffix/,
    ],
    [
      'names in the wrong case',
      { AzureWebJobsStorage: 'defaultendpointsprotocol=https;accountname=a;accountkey=YQ==;endpointsuffix=core.windows.net' },
      /^AzureWebJobsStorage needs/,
    ],
    ['a development flag not first', { AzureWebJobsStorage: 'usedevelopmentstorage=true' }, /^AzureWebJobsStorage needs/],
    ['a storage connection string that is not one', { AzureWebJobsStorage: 'just some text' }, /^AzureWebJobsStorage must be a connection string/],
    ['a base URL with user info', { MANAGEMENT_BASE_URL: 'https://user:pass@management.example.com' }, /^MANAGEMENT_BASE_URL must not hold user info/],
    ['a base URL with a query', { LIFECYCLE_BASE_URL: 'https://lcs.example.com/?tenant=1' }, /^LIFECYCLE_BASE_URL must not have a query/],
    ['a base URL with a fragment', { MANAGEMENT_BASE_URL: 'https://management.example.com/#x' }, /^MANAGEMENT_BASE_URL must not have a fragment/],
    ['a public URL that is not absolute', { APP_PUBLIC_URL: 'gw.contoso.com/api' }, /^APP_PUBLIC_URL must be an absolute http or https URL/],
    ['a public URL of another scheme', { APP_PUBLIC_URL: 'ftp://gw.contoso.com/api' }, /^APP_PUBLIC_URL must be an absolute http or https URL/],
    ['a public URL with a query', { APP_PUBLIC_URL: 'https://gw.contoso.com/api?code=x' }, /^APP_PUBLIC_URL must not have a query/],
    ['a public URL with user info', { APP_PUBLIC_URL: 'https://me:pw@gw.contoso.com/api' }, /^APP_PUBLIC_URL must not hold user info/],
    [
      'a poll floor above the ceiling',
      { LRO_MIN_POLL_SECONDS: '900', LRO_MAX_POLL_SECONDS: '600' },
      /LRO_MIN_POLL_SECONDS \(900\) must not be above LRO_MAX_POLL_SECONDS \(600\)/,
    ],
    [
      'a certificate alert earlier than the renewal, which health could never raise',
      { CERT_RENEW_BEFORE_DAYS: '10', CERT_ALERT_DAYS: '11' },
      /CERT_ALERT_DAYS \(11\) must not be above CERT_RENEW_BEFORE_DAYS \(10\)/,
    ],
    ['a negative certificate alert', { CERT_ALERT_DAYS: '-1' }, /^CERT_ALERT_DAYS /],
    ['a deadline beyond what a date holds', { LRO_DEADLINE_MINUTES: '{"ContainerGroups_CreateOrUpdate": 1e300}' }, /^LRO_DEADLINE_MINUTES /],
    [
      'a projectId the routes would refuse',
      { CERT_ENVIRONMENTS: '[{"projectId": 99999999999, "environmentId": "6f1a2b3c-1234-4abc-9def-0123456789ab"}]' },
      /^CERT_ENVIRONMENTS /,
    ],
    // The host's NCRONTAB has no L, ?, # or W: the poller would never run and no operation would end.
    [
      'a poll schedule the host would put in error',
      { ORCHESTRATION_POLL_SCHEDULE: '0 0 12 L * *' },
      /^ORCHESTRATION_POLL_SCHEDULE must be an NCRONTAB expression of six fields .*"L" is not a value of the day field/,
    ],
    ['a refresh schedule that never fires', { CERT_REFRESH_SCHEDULE: '0 0 0 31 4 *' }, /^CERT_REFRESH_SCHEDULE never fires/],
  ])('stops start-up for %s, naming the setting', (_title, settings, message) => {
    let caught: unknown;
    try {
      parseConfig({ ...minimal, ...settings });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    expect((caught as ConfigError).problems).toEqual([expect.stringMatching(message)]);
  });

  it('never repeats a storage connection string in its message: it holds the account key', () => {
    const secretKey = 'c2VjcmV0LWtleS10aGF0LW11c3Qtbm90LWxlYWs=';
    expect(() => parseConfig({ ...minimal, AzureWebJobsStorage: `AccountName=a;AccountKey=${secretKey};BlobEndpoint=nope` })).toThrow(ConfigError);
    try {
      parseConfig({ ...minimal, AzureWebJobsStorage: `AccountName=a;AccountKey=${secretKey};BlobEndpoint=nope` });
    } catch (error) {
      expect((error as Error).message).not.toContain(secretKey);
    }
  });

  it.each([
    'UseDevelopmentStorage=true',
    'DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=a2V5a2V5;EndpointSuffix=core.windows.net',
    'UseDevelopmentStorage=true;DevelopmentStorageProxyUri=http://127.0.0.1:1',
    'DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=a2V5;BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;',
    'BlobEndpoint=https://acct.blob.core.windows.net;SharedAccessSignature=sv=2024-01-01&sig=abc',
  ])('accepts the storage connection string %s', (connection) => {
    expect(parseConfig({ ...minimal, AzureWebJobsStorage: connection }).storage).toEqual({ kind: 'connectionString', connectionString: connection });
  });

  it.each([
    ['an internationalised host, in punycode', 'https://网关.example/api', 'https://xn--d6q013i.example/api'],
    ['backslashes, as slashes', 'https:\\\\gw.contoso.example\\api', 'https://gw.contoso.example/api'],
    ['spaces and other characters of the path, percent-encoded', 'https://gw.contoso.example/my api/ü/', 'https://gw.contoso.example/my%20api/%C3%BC'],
    ['an upper-case host and the default port, as a browser writes them', 'https://GW.Contoso.Example:443/Api', 'https://gw.contoso.example/Api'],
  ])('normalises APP_PUBLIC_URL with %s', (_title, given, normalised) => {
    const url = parseConfig({ ...minimal, APP_PUBLIC_URL: given }).APP_PUBLIC_URL!;
    expect(url).toBe(normalised);
    expect(/^[\x21-\x7e]+$/.test(url)).toBe(true);
  });

  it('keeps APP_PUBLIC_URL without its trailing slash, and leaves it unset by default', () => {
    expect(parseConfig({ ...minimal, APP_PUBLIC_URL: 'https://gw.contoso.com/api/' }).APP_PUBLIC_URL).toBe('https://gw.contoso.com/api');
    expect(parseConfig(minimal).APP_PUBLIC_URL).toBeUndefined();
  });

  it('words a number setting given no number as it words every other setting', () => {
    expect(problemsOf({ ...minimal, PORT: 'eighty' })).toEqual(['PORT must be a whole number from 0 to 65535']);
    expect(problemsOf({ ...minimal, PORT: '70.5' })).toEqual(['PORT must be a whole number from 0 to 65535']);
    expect(problemsOf({ ...minimal, CERT_ALERT_DAYS: 'soon' })).toEqual(['CERT_ALERT_DAYS must be a number from 0 up to 3650']);
    expect(problemsOf({ ...minimal, ORCHESTRATION_RETENTION_HOURS: '0' })).toEqual(['ORCHESTRATION_RETENTION_HOURS must be a number above 0 up to 8760']);
  });

  it('lists the problems across settings with those of single settings, in one message', () => {
    const problems = problemsOf({ ...minimal, PORT: 'x', UPSTREAM_AUTH: 'static', LRO_MIN_POLL_SECONDS: '900', LRO_MAX_POLL_SECONDS: '600' });
    expect(problems).toEqual([
      'PORT must be a whole number from 0 to 65535',
      'LRO_MIN_POLL_SECONDS (900) must not be above LRO_MAX_POLL_SECONDS (600)',
      'UPSTREAM_STATIC_TOKEN is required when UPSTREAM_AUTH is static',
    ]);
  });

  it('leaves out a rule across settings while one of its settings is itself invalid', () => {
    expect(problemsOf({ ...minimal, LRO_MIN_POLL_SECONDS: '900', LRO_MAX_POLL_SECONDS: 'x' })).toEqual([
      'LRO_MAX_POLL_SECONDS must be a whole number from 1 to 86400',
    ]);
  });

  it('needs a token for static auth', () => {
    expect(() => parseConfig({ ...minimal, UPSTREAM_AUTH: 'static' })).toThrow(/UPSTREAM_STATIC_TOKEN is required/);
  });
});

describe('local.settings.sample.json', () => {
  const sample = parse(readFileSync(resolve(__dirname, '..', '..', 'local.settings.sample.json'), 'utf8')) as { Values: Record<string, string> };

  it('parses with what npm start adds for the embedded emulator and Azurite', () => {
    const embedded = {
      MANAGEMENT_BASE_URL: 'http://127.0.0.1:1',
      LIFECYCLE_BASE_URL: 'http://127.0.0.1:1',
      UPSTREAM_AUTH: 'static',
      UPSTREAM_STATIC_TOKEN: 'emulator-token',
    };
    expect(() => parseConfig({ ...sample.Values, ...embedded })).not.toThrow();
  });
});

describe('identity-based storage, as the Functions host reads it', () => {
  const clientId = '11111111-2222-4333-8444-555555555555';

  it.each<[string, Record<string, string>, unknown]>([
    [
      'an account name, with the user-assigned identity',
      { AzureWebJobsStorage__accountName: 'gwstore01', AzureWebJobsStorage__credential: 'managedidentity', AzureWebJobsStorage__clientId: clientId },
      { kind: 'identity', blobServiceUri: 'https://gwstore01.blob.core.windows.net', credential: 'managedidentity', clientId },
    ],
    [
      'a blob service URI (another cloud), with the system-assigned identity, the credential in any case',
      { AzureWebJobsStorage__blobServiceUri: 'https://gwstore01.blob.core.chinacloudapi.cn/', AzureWebJobsStorage__credential: 'ManagedIdentity' },
      { kind: 'identity', blobServiceUri: 'https://gwstore01.blob.core.chinacloudapi.cn', credential: 'managedidentity' },
    ],
    [
      'the user-assigned identity by its resource id',
      {
        AzureWebJobsStorage__accountName: 'gwstore01',
        AzureWebJobsStorage__credential: 'managedidentity',
        AzureWebJobsStorage__managedIdentityResourceId: '/subscriptions/s/resourceGroups/rg/providers/Microsoft.ManagedIdentity/userAssignedIdentities/id-gw',
      },
      {
        kind: 'identity',
        blobServiceUri: 'https://gwstore01.blob.core.windows.net',
        credential: 'managedidentity',
        resourceId: '/subscriptions/s/resourceGroups/rg/providers/Microsoft.ManagedIdentity/userAssignedIdentities/id-gw',
      },
    ],
    [
      'an account name alone: DefaultAzureCredential, as the host does locally',
      { AzureWebJobsStorage__accountName: 'gwstore01' },
      { kind: 'identity', blobServiceUri: 'https://gwstore01.blob.core.windows.net', credential: 'default' },
    ],
    [
      'in Azure, an identity-based account',
      { WEBSITE_INSTANCE_ID: 'abc', AzureWebJobsStorage__accountName: 'gwstore01', AzureWebJobsStorage__credential: 'managedidentity' },
      { kind: 'identity', blobServiceUri: 'https://gwstore01.blob.core.windows.net', credential: 'managedidentity' },
    ],
  ])('reads %s', (_title, settings, storage) => {
    expect(parseConfig({ ...minimal, ...settings }).storage).toEqual(storage);
  });

  it('takes a container outside Azure for a local machine: CONTAINER_NAME alone (a development container, a CI runner) keeps development storage', () => {
    expect(parseConfig({ ...minimal, CONTAINER_NAME: 'dev-container' }).storage).toEqual({
      kind: 'connectionString',
      connectionString: 'UseDevelopmentStorage=true',
    });
  });

  it.each<[string, Record<string, string>, RegExp]>([
    [
      'nothing, in Azure',
      { WEBSITE_INSTANCE_ID: 'abc' },
      /^No storage is set, and the app runs in Azure \(WEBSITE_INSTANCE_ID is set\), where it never falls back to development storage: set AzureWebJobsStorage__accountName/,
    ],
    // Flex Consumption sets no WEBSITE_INSTANCE_ID: its SKU, or before the site settings arrive its pod's name.
    ['nothing, on Flex Consumption', { WEBSITE_SKU: 'FlexConsumption' }, /^No storage is set, and the app runs in Azure \(WEBSITE_SKU is set\)/],
    ['nothing, on a Flex Consumption instance', { WEBSITE_POD_NAME: 'pod-1' }, /^No storage is set, and the app runs in Azure \(WEBSITE_POD_NAME is set\)/],
    [
      'a client id and a resource id',
      {
        AzureWebJobsStorage__accountName: 'gwstore01',
        AzureWebJobsStorage__credential: 'managedidentity',
        AzureWebJobsStorage__clientId: clientId,
        AzureWebJobsStorage__managedIdentityResourceId: '/subscriptions/s/resourceGroups/rg/providers/Microsoft.ManagedIdentity/userAssignedIdentities/id-gw',
      },
      /^AzureWebJobsStorage__clientId and AzureWebJobsStorage__managedIdentityResourceId are both set/,
    ],
    [
      'a resource id that names no identity',
      {
        AzureWebJobsStorage__accountName: 'gwstore01',
        AzureWebJobsStorage__credential: 'managedidentity',
        AzureWebJobsStorage__managedIdentityResourceId: '/subscriptions/s/resourceGroups/rg',
      },
      /^AzureWebJobsStorage__managedIdentityResourceId must be the resource id of a user-assigned identity/,
    ],
    [
      'development storage, in Azure',
      { WEBSITE_INSTANCE_ID: 'abc', AzureWebJobsStorage: 'UseDevelopmentStorage=true' },
      /^AzureWebJobsStorage is UseDevelopmentStorage=true, which names no storage in Azure/,
    ],
    [
      'a connection string and an account name',
      { AzureWebJobsStorage: 'UseDevelopmentStorage=true', AzureWebJobsStorage__accountName: 'gwstore01' },
      /are both set: keep one/,
    ],
    [
      'an account name and a URI',
      { AzureWebJobsStorage__accountName: 'gwstore01', AzureWebJobsStorage__blobServiceUri: 'https://gwstore01.blob.core.windows.net' },
      /^AzureWebJobsStorage__accountName and AzureWebJobsStorage__blobServiceUri are both set/,
    ],
    [
      'a credential with no account',
      { AzureWebJobsStorage__credential: 'managedidentity' },
      /go with AzureWebJobsStorage__accountName or AzureWebJobsStorage__blobServiceUri, which are not set/,
    ],
    [
      'a client id with no credential',
      { AzureWebJobsStorage__accountName: 'gwstore01', AzureWebJobsStorage__clientId: clientId },
      /^AzureWebJobsStorage__clientId needs AzureWebJobsStorage__credential=managedidentity/,
    ],
    ['an account name that is not one', { AzureWebJobsStorage__accountName: 'GW_Store' }, /^AzureWebJobsStorage__accountName must be a storage account name/],
    [
      'a plain-HTTP blob service URI',
      { AzureWebJobsStorage__blobServiceUri: 'http://127.0.0.1:10000/devstoreaccount1' },
      /^AzureWebJobsStorage__blobServiceUri must be an https URL \(a token is never sent over plain HTTP\)/,
    ],
    [
      'another credential',
      { AzureWebJobsStorage__accountName: 'gwstore01', AzureWebJobsStorage__credential: 'connectionstring' },
      /^AzureWebJobsStorage__credential must be managedidentity/,
    ],
    [
      'a client id that is not one',
      { AzureWebJobsStorage__accountName: 'gwstore01', AzureWebJobsStorage__credential: 'managedidentity', AzureWebJobsStorage__clientId: 'my-identity' },
      /^AzureWebJobsStorage__clientId must be the client id \(a GUID\)/,
    ],
  ])('refuses %s, saying what to set', (_title, settings, message) => {
    expect(problemsOf({ ...minimal, ...settings })).toEqual([expect.stringMatching(message)]);
  });
});

describe('APPLICATIONINSIGHTS_AUTHENTICATION_STRING', () => {
  it.each([
    ['Authorization=AAD', { clientId: undefined }],
    ['Authorization=AAD;ClientId=11111111-2222-4333-8444-555555555555', { clientId: '11111111-2222-4333-8444-555555555555' }],
    ['ClientId=11111111-2222-4333-8444-555555555555;authorization=aad;', { clientId: '11111111-2222-4333-8444-555555555555' }],
  ])('reads %s', (text, parsed) => {
    expect(parseConfig({ ...minimal, APPLICATIONINSIGHTS_AUTHENTICATION_STRING: text }).APPLICATIONINSIGHTS_AUTHENTICATION_STRING).toEqual(parsed);
  });

  it.each(['Authorization=Key', 'ClientId=11111111-2222-4333-8444-555555555555', 'Authorization=AAD;ClientId=me', 'Authorization=AAD;Secret=x'])(
    'refuses %s, saying what it takes',
    (text) => {
      expect(problemsOf({ ...minimal, APPLICATIONINSIGHTS_AUTHENTICATION_STRING: text })).toEqual([
        'APPLICATIONINSIGHTS_AUTHENTICATION_STRING must be Authorization=AAD (the system-assigned identity) or Authorization=AAD;ClientId=<client id of a user-assigned identity>',
      ]);
    },
  );
});

describe('a Key Vault reference the platform could not resolve', () => {
  const reference = '@Microsoft.KeyVault(SecretUri=https://kv-abc.vault.azure.net/secrets/slack-signing-secret)';

  it.each(['SLACK_SIGNING_SECRET', 'NOTIFY_SIGNING_SECRET', 'LIFECYCLE_PASSWORD'])(
    'in %s stops the start, once, saying what to fix: its text is no secret',
    (name) => {
      const settings: Record<string, string> =
        name === 'LIFECYCLE_PASSWORD' ? { LIFECYCLE_TENANT_ID: 't', LIFECYCLE_CLIENT_ID: 'c', LIFECYCLE_USERNAME: 'u' } : {};
      expect(problemsOf({ ...minimal, ...settings, [name]: reference })).toEqual([
        `${name} is a Key Vault reference the platform could not resolve, so the app does not start rather than take its text as the secret: give the app's identity Key Vault Secrets User on the vault (and name that identity in the site's keyVaultReferenceIdentity), then restart the app`,
      ]);
    },
  );

  it('is told from a secret that merely mentions one', () => {
    expect(problemsOf({ ...minimal, SLACK_SIGNING_SECRET: 'not @Microsoft.KeyVault(...) at all, a real secret' })).toEqual([]);
  });
});
