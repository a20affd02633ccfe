/** ALLOWED_SCOPES prefixes match whole segments, ignoring case, compared as decoded names. */
import { isScopeAllowed } from '../../../src/http/scopeGuard';
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
    ['a non-ASCII resource group, decomposed accent in the prefix', 'rg-café', ['/subscriptions/sub-1/resourceGroups/rg-cafe\u0301'], true],
    ['another resource group', 'rg-other', ['/subscriptions/sub-1/resourceGroups/rg-café'], false],
    ['a longer name sharing the prefix', 'rg-caféteria', ['/subscriptions/sub-1/resourceGroups/rg-café'], false],
    ['the subscription', 'anything', ['/subscriptions/SUB-1'], true],
  ])('%s', (_title, resourceGroupName, scopes, allowed) => {
    expect(isScopeAllowed(target(resourceGroupName), scopes)).toBe(allowed);
  });
});
