/**
 * The services a cold start builds: storage and identity, with their packages, wait for the
 * first call that needs them (src/loading/lazyPackages.ts), so a call passed straight upstream never
 * loads them.
 */
import { parseConfig } from '../../src/settings/config';
import * as lazyPackages from '../../src/loading/lazyPackages';
import { createServices } from '../../src/app/services';

afterEach(() => jest.restoreAllMocks());

const settings = { MANAGEMENT_BASE_URL: 'http://127.0.0.1:9', LIFECYCLE_BASE_URL: 'http://127.0.0.1:9' };

it('builds storage on the first use of what lives in it, once for all of it', async () => {
  const storage = jest.spyOn(lazyPackages, 'storageBlobPackage');
  const services = createServices(parseConfig({ ...settings, UPSTREAM_AUTH: 'static', UPSTREAM_STATIC_TOKEN: 't' }));
  expect(await services.tokens.getToken({ upstream: 'management' })).toBe('t');
  expect(storage).not.toHaveBeenCalled();
  const { orchestrations } = services;
  expect(storage).toHaveBeenCalledTimes(1);
  expect(services.orchestrations).toBe(orchestrations);
  expect(services.certificates.downloadGuard).toBe(services.certificates.downloadGuard);
  expect(storage).toHaveBeenCalledTimes(1);
  await services.upstreams.management.close();
});

it('loads identity in managed mode only when a token is asked for', () => {
  const identity = jest.spyOn(lazyPackages, 'identityPackage');
  const services = createServices(parseConfig({ ...settings, UPSTREAM_AUTH: 'managed' }));
  expect(services.tokens.mode).toBe('managed');
  expect(identity).not.toHaveBeenCalled();
});
