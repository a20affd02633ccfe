/** `health` names a token request still waiting beside a dependency that does not answer: what it waits on, not only that it failed. */
import { HealthMonitor } from '../../src/health';
import { credentialOnFirstUse } from '../../src/identity/credentialOnFirstUse';
import * as lazyPackages from '../../src/loading/lazyPackages';

afterEach(() => jest.restoreAllMocks());

it('says a dependency waits on a token that has no answer yet, and says nothing of tokens once none waits', async () => {
  jest.spyOn(lazyPackages, 'identityPackage').mockImplementation(() => ({}) as typeof import('@azure/identity'));
  let answer: (() => void) | undefined;
  const credential = credentialOnFirstUse(
    () => ({ getToken: () => new Promise((resolve) => (answer = () => resolve({ token: 't', expiresOnTimestamp: Date.now() + 3600_000 }))) }),
    60_000,
    'storage',
  );
  const asking = credential.getToken('https://storage.azure.com/.default');
  const monitor = (fails: boolean) =>
    new HealthMonitor({
      checks: {
        storage: async () => {
          if (fails) throw Object.assign(new Error('no answer'), { code: 'StorageUnavailable' });
          return 'reachable';
        },
        management: async () => 'reachable',
        lifecycle: async () => 'reachable',
      },
      version: '0',
      cacheMs: 0,
      now: Date.now,
    });
  const stuck = await monitor(true).report();
  expect(stuck.status).toBe('Degraded');
  expect(stuck.dependencies.storage.detail).toMatch(/^StorageUnavailable; a token for storage asked [\d.]+ s ago has no answer yet$/);
  answer!();
  await asking;
  expect((await monitor(true).report()).dependencies.storage.detail).toBe('StorageUnavailable');
});
