#!/bin/sh
# Runs a command with Node <major> first on PATH: `tools/withNode.sh 22 npm test`.
#
# The binary comes from the npm registry (the package node-<os>-<arch>@<major>, which holds
# Node's official build), so the registry that serves the project's dependencies is all it needs:
# no installer, nothing global. It is kept in .node-versions/<major>/ (git-ignored, outside
# node_modules so `npm ci` leaves it) and fetched once: delete the folder to take a newer release.
# The machine's own Node serves when its major is the one asked for. npm itself stays the
# machine's: its scripts and the tools they start (jest, esbuild, tsc) run on the `node` PATH finds.
set -eu

usage() {
  echo "usage: tools/withNode.sh <major> <command> [arguments...]   e.g. tools/withNode.sh 22 npm test" >&2
  exit 2
}
[ "$#" -ge 2 ] || usage
major=$1
shift
case "$major" in '' | *[!0-9]*) usage ;; esac

if command -v node >/dev/null 2>&1 && [ "$(node -p 'process.versions.node.split(".")[0]')" = "$major" ]; then
  exec "$@"
fi

root=$(cd "$(dirname "$0")/.." && pwd)
folder="$root/.node-versions/$major"
if [ ! -x "$folder/bin/node" ]; then
  case "$(uname -s)" in Linux) os=linux ;; Darwin) os=darwin ;; *) echo "withNode.sh: no Node package for $(uname -s)" >&2; exit 1 ;; esac
  case "$(uname -m)" in x86_64 | amd64) arch=x64 ;; aarch64 | arm64) arch=arm64 ;; *) echo "withNode.sh: no Node package for $(uname -m)" >&2; exit 1 ;; esac
  mkdir -p "$root/.node-versions"
  download=$(mktemp -d "$root/.node-versions/.download.XXXXXX")
  trap 'rm -rf "$download"' EXIT
  echo "withNode.sh: fetching node-$os-$arch@$major from the npm registry" >&2
  tarball=$(cd "$download" && npm pack "node-$os-$arch@$major" --silent)
  tar -xzf "$download/$tarball" -C "$download" package/bin/node package/package.json
  # Moved into place whole: a second run never sees a half-written binary.
  rm -rf "$folder"
  mv "$download/package" "$folder"
  # exec below skips the EXIT trap: clean up now.
  rm -rf "$download"
  trap - EXIT
fi

PATH="$folder/bin:$PATH"
export PATH
"$folder/bin/node" -e 'if (process.versions.node.split(".")[0] !== process.argv[1]) { console.error(`withNode.sh: ${process.execPath} is Node ${process.version}, not ${process.argv[1]}`); process.exit(1); }' "$major"
exec "$@"
