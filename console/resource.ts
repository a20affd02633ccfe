/**
 * What an orchestration acts on, read from its upstream path (an ARM id, perhaps with an action
 * after it): the resource's name and group for the list, the whole id for a tooltip and the
 * detail view, and the Azure portal's link where there is a resource the portal knows.
 */
export interface ResourceRef {
  /** The resource's name; a child's is its parent's and its own, `namespace/connection`, as ARM names them. */
  name: string;
  /** The resource group, when the path is in one. */
  group?: string;
  /** The resource's id, with a leading slash, without an action after it (`/migrateToStv2`). */
  id: string;
  /** The provider namespace, `Microsoft.ContainerInstance`. */
  provider?: string;
  /** The path as stored. */
  path: string;
}

function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

const indexOf = (segments: string[], name: string, last = false) => {
  const lower = segments.map((segment) => segment.toLowerCase());
  return last ? lower.lastIndexOf(name) : lower.indexOf(name);
};

export function resourceOf(path: string): ResourceRef {
  const segments = path.split('/').filter(Boolean);
  const groupAt = indexOf(segments, 'resourcegroups');
  const group = groupAt >= 0 && segments[groupAt + 1] ? decoded(segments[groupAt + 1]!) : undefined;
  const providerAt = indexOf(segments, 'providers', true);
  if (providerAt < 0 || segments.length < providerAt + 4) {
    return { name: decoded(segments.at(-1) ?? path), group, id: `/${segments.join('/')}`, path };
  }
  // After the namespace: type/name pairs; an odd segment left at the end is an action.
  const pairs = segments.slice(providerAt + 2);
  const names = pairs.filter((_, index) => index % 2 === 1).map(decoded);
  const idLength = providerAt + 2 + pairs.length - (pairs.length % 2);
  return { name: names.join('/'), group, id: `/${segments.slice(0, idLength).join('/')}`, provider: segments[providerAt + 1], path };
}

/** The resource in the Azure portal, for a `Microsoft.*` resource under a subscription only: the emulator's `Vendor.*` ones lead nowhere there. */
export function portalLinkOf(resource: ResourceRef): string | undefined {
  if (!/^microsoft\./i.test(resource.provider ?? '') || !/^\/subscriptions\//i.test(resource.id)) return undefined;
  return `https://portal.azure.com/#resource${resource.id}`;
}
