/** Settings are parsed once; a bad value names every bad setting and what it accepts. */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { ConfigError, parseConfig, settingNames } from '../../src/config';

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
      AzureWebJobsStorage: 'UseDevelopmentStorage=true',
      CERT_ENVIRONMENTS: [],
      CERT_REFRESH_SCHEDULE: '0 0 */6 * * *',
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

  it('needs a token for static auth', () => {
    expect(() => parseConfig({ ...minimal, UPSTREAM_AUTH: 'static' })).toThrow(/UPSTREAM_STATIC_TOKEN is required/);
  });
});

describe('local.settings.sample.json', () => {
  const sample = JSON.parse(readFileSync(resolve(__dirname, '..', '..', 'local.settings.sample.json'), 'utf8')) as { Values: Record<string, string> };

  it('lists every setting the app reads, and parses', () => {
    expect(settingNames.filter((name) => !(name in sample.Values))).toEqual([]);
    expect(() => parseConfig(sample.Values)).not.toThrow();
  });
});
