/** ALLOWED_SCOPES prefixes match whole segments, compared as decoded names the way ARM compares them (ordinal, ignoring case). */
import { isScopeAllowed } from '../../../src/rules/scopeGuard';
import { fillPath } from '../../../src/spec/catalogue';

const target = (resourceGroupName: string) =>
  fillPath('subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers/Vendor.ContainerInstance/containerGroups/{containerGroupName}', {
    subscriptionId: 'sub-1',
    resourceGroupName,
    containerGroupName: 'demo',
  });

describe('isScopeAllowed', () => {
  it.each<[string, string, string[], boolean]>([
    ['a non-ASCII resource group, prefix written as read', 'rg-café', ['/subscriptions/sub-1/resourceGroups/rg-café'], true],
    ['a non-ASCII resource group, other case', 'RG-CAFÉ', ['/subscriptions/sub-1/resourceGroups/rg-café'], true],
    ['a non-ASCII resource group, prefix percent-encoded', 'rg-café', ['/subscriptions/sub-1/resourceGroups/rg-caf%C3%A9'], true],
    [
      'a decomposed accent in the prefix: another name to ARM, which compares code points',
      'rg-café',
      ['/subscriptions/sub-1/resourceGroups/rg-cafe\u0301'],
      false,
    ],
    ['a Kelvin sign (U+212A) for K: another resource group to ARM', 'rg-\u212a', ['/subscriptions/sub-1/resourceGroups/rg-k'], false],
    ['the same, upper case', 'RG-\u212a', ['/subscriptions/sub-1/resourceGroups/rg-k'], false],
    ['another resource group', 'rg-other', ['/subscriptions/sub-1/resourceGroups/rg-café'], false],
    ['a longer name sharing the prefix', 'rg-caféteria', ['/subscriptions/sub-1/resourceGroups/rg-café'], false],
    ['the subscription', 'anything', ['/subscriptions/SUB-1'], true],
  ])('%s', (_title, resourceGroupName, scopes, allowed) => {
    expect(isScopeAllowed(target(resourceGroupName), scopes)).toBe(allowed);
  });
});
