/**
 * Why no route matched when a path names a provider the app serves under another namespace: the
 * Azure SDKs and az call `Microsoft.*` paths, while the app serves `{PROVIDER_NAMESPACE}.*`
 * (`Vendor.*` by default, with the embedded emulator). The namespaces served are read from the
 * registered route templates, so the hint names what the app really serves.
 */

/** `providers/Vendor.ContainerInstance`, also as a route constraint's regex writes it (`Vendor\.ContainerInstance`). */
const providerSegment = /(?:^|[/(|])providers\/([A-Za-z][A-Za-z0-9]*)\\?\.([A-Za-z][A-Za-z0-9]*)/gi;

/** Provider name in lower case → the `Namespace.Provider` the routes serve. */
export function servedProviders(routeTemplates: readonly string[]): Map<string, { namespace: string; provider: string }> {
  const served = new Map<string, { namespace: string; provider: string }>();
  for (const template of routeTemplates) {
    for (const [, namespace, provider] of template.matchAll(providerSegment))
      served.set(provider!.toLowerCase(), { namespace: namespace!, provider: provider! });
  }
  return served;
}

/** The hint for a path no route matched, or undefined when its providers are not served under another namespace. */
export function namespaceHint(path: string, served: ReadonlyMap<string, { namespace: string; provider: string }>): string | undefined {
  for (const [, namespace, provider] of path.matchAll(providerSegment)) {
    const known = served.get(provider!.toLowerCase());
    if (known && known.namespace.toLowerCase() !== namespace!.toLowerCase()) {
      return (
        `the path names ${namespace}.${provider}, and this app serves ${known.namespace}.${known.provider} (PROVIDER_NAMESPACE=${known.namespace}). ` +
        `Start it with PROVIDER_NAMESPACE=${namespace} to serve ${namespace}.* paths${namespace === 'Microsoft' ? ', as the Azure SDKs and az call them' : ''}.`
      );
    }
  }
  return undefined;
}
