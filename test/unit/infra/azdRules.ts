/**
 * azd's rule for `remoteBuild` and `.funcignore` of a function app, as azd applies it when it
 * deploys to Flex Consumption (`azd deploy`, `azd up`, `azd deploy --from-package` alike): a port of
 * resolveFunctionAppRemoteBuild (Azure/azure-dev, cli/azd/pkg/project/service_target_functionapp.go,
 * since azd 1.23.12) and of what its ignore-file parser (github.com/denormal/go-gitignore) answers
 * for the one path it asks about, the directory node_modules at the project's root. azd's own cases
 * (test/fixtures/azd/remoteBuildCases.json) hold the port to azd's answers.
 */

export type RemoteBuildAnswer = { remoteBuild: boolean } | { error: string };

/** A gitignore glob of one path segment as a regular expression: `*` and `?` stop at a slash. */
function segmentPattern(glob: string): RegExp {
  const source = glob.replace(/\\(.)|([*?])|(\[[^\]]*\])|([.+^${}()|\\/])/g, (_, escaped: string | undefined, wildcard: string | undefined, range: string | undefined, special: string | undefined) => {
    if (escaped !== undefined) return escaped.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    if (wildcard) return wildcard === '*' ? '[^/]*' : '[^/]';
    if (range) return range.replace(/^\[!/, '[^');
    return `\\${special}`;
  });
  return new RegExp(`^${source}$`);
}

/** Whether an ignore file excludes the directory node_modules at its own folder's root: the last pattern that matches decides. */
export function excludesNodeModules(ignoreFile: string): boolean {
  let excluded = false;
  // A UTF-8 BOM is dropped first (azd's stripUTF8BOM); CRLF ends a line as LF does.
  for (const raw of ignoreFile.replace(/^\uFEFF/, '').split('\n')) {
    let pattern = raw.replace(/\r$/, '').replace(/(?<!\\)\s+$/, '');
    if (pattern === '' || pattern.startsWith('#')) continue;
    const negated = pattern.startsWith('!');
    if (negated) pattern = pattern.slice(1);
    // A trailing slash: directories only (node_modules is one). A leading slash or `**/`: from the
    // root, where node_modules is. A trailing `/**`: the folder's contents, and go-gitignore
    // matches the folder itself with it (azd's case GlobPattern_NodeModules).
    pattern = pattern.replace(/\/$/, '').replace(/^\//, '').replace(/^\*\*\//, '').replace(/\/\*\*$/, '');
    // A pattern of more segments cannot name a folder at the root.
    if (pattern.includes('/')) continue;
    if (segmentPattern(pattern).test('node_modules')) excluded = !negated;
  }
  return excluded;
}

/** What azd decides for a service: its language, its `remoteBuild` (undefined: not set), and its project's .funcignore (undefined: none). */
export function resolveRemoteBuild(language: string, remoteBuild: boolean | undefined, funcignore: string | undefined): RemoteBuildAnswer {
  if (language === 'js' || language === 'ts') {
    if (funcignore === undefined) return { remoteBuild: remoteBuild ?? true };
    const excluded = excludesNodeModules(funcignore);
    if (remoteBuild === undefined) return { remoteBuild: excluded };
    if (remoteBuild && !excluded) return { error: "'remoteBuild: true' requires '.funcignore' to exclude node_modules" };
    if (!remoteBuild && excluded) return { error: "'remoteBuild: false' cannot be used when '.funcignore' excludes node_modules" };
    return { remoteBuild };
  }
  if (language === 'go' || language === 'golang') return remoteBuild ? { error: 'remote build is not supported for Go function apps' } : { remoteBuild: false };
  return { remoteBuild: remoteBuild ?? (language === 'python' || language === 'py') };
}
