#!/usr/bin/env bash
# Prints the path of a Bicep CLI for infra/ (bicep build, build-params, lint), restoring it first
# when it is not there: the NuGet package Azure.Bicep.CommandLine.<platform>, a self-contained
# `bicep` under the package's tools/ folder, through `dotnet restore` of a throw-away project.
# Without dotnet, a `bicep` on PATH. test/unit/infra/bicepCli.ts looks for the same version.
#   tools/bicep.sh            the CLI's path (restored when needed)
#   "$(tools/bicep.sh)" build infra/main.bicep
set -euo pipefail
version=0.49.2
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) platform=linux-x64 ;;
  Linux-aarch64 | Linux-arm64) platform=linux-arm64 ;;
  Darwin-x86_64) platform=osx-x64 ;;
  Darwin-arm64) platform=osx-arm64 ;;
  *) platform="" ;;
esac
packages="${NUGET_PACKAGES:-$HOME/.nuget/packages}"
cli="$packages/azure.bicep.commandline.$platform/$version/tools/bicep"
if [ -n "$platform" ] && [ ! -f "$cli" ] && command -v dotnet >/dev/null; then
  project="$(mktemp -d)"
  trap 'rm -rf "$project"' EXIT
  # PackageDownload fetches the package without referencing it: no assembly of it is built against.
  cat >"$project/bicep.csproj" <<PROJECT
<Project Sdk="Microsoft.NET.Sdk">
  <PropertyGroup>
    <TargetFramework>net$(dotnet --version | cut -d. -f1).0</TargetFramework>
  </PropertyGroup>
  <ItemGroup>
    <PackageDownload Include="Azure.Bicep.CommandLine.$platform" Version="[$version]" />
  </ItemGroup>
</Project>
PROJECT
  echo "Restoring the Bicep CLI $version (NuGet package Azure.Bicep.CommandLine.$platform)" >&2
  dotnet restore "$project/bicep.csproj" --verbosity quiet >&2
fi
if [ -n "$platform" ] && [ -f "$cli" ]; then
  # The package's file comes without its run bit.
  chmod +x "$cli"
  echo "$cli"
elif command -v bicep >/dev/null; then
  command -v bicep
else
  echo "No Bicep CLI: install the .NET SDK (then run this again) or put bicep on PATH" >&2
  exit 1
fi
