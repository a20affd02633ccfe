/**
 * The Bicep CLI for the tests that compile infra/ (bicep.test.ts): the NuGet package tools/bicep.sh
 * restores (the version main.json is compiled with), else a `bicep` on PATH, else azd's own. Where
 * there is none, those tests say so in one line and do not run, unless REQUIRE_BICEP=1 (.ci/run
 * sets it): then they fail, so that CI never passes without them.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { repositoryRoot } from './armTemplate';

/** The version tools/bicep.sh restores, and infra/main.json is compiled with. */
export const bicepVersion = '0.49.2';

const platforms: Record<string, string> = { 'linux-x64': 'linux-x64', 'linux-arm64': 'linux-arm64', 'darwin-x64': 'osx-x64', 'darwin-arm64': 'osx-arm64' };
const platform = platforms[`${process.platform}-${process.arch}`];

function findBicep(): string | undefined {
  const packages = process.env.NUGET_PACKAGES ?? join(homedir(), '.nuget', 'packages');
  const candidates = [
    ...(platform ? [join(packages, `azure.bicep.commandline.${platform}`, bicepVersion, 'tools', 'bicep')] : []),
    ...(process.env.PATH ?? '').split(delimiter).map((folder) => join(folder, 'bicep')),
    join(homedir(), '.azd', 'bin', 'bicep'),
  ];
  return candidates.find((candidate) => candidate && existsSync(candidate));
}

export const bicepPath = findBicep();

/** Runs the CLI in the repository's root: its exit code and everything it printed. */
export function bicep(args: string[], env: Record<string, string> = {}): Promise<{ code: number; output: string }> {
  if (!bicepPath) throw new Error('No Bicep CLI');
  return new Promise((resolve) => {
    // The CLI's own telemetry and update checks stay off; it needs no network for local files.
    const childEnv = { ...process.env, BICEP_TRACING_ENABLED: 'false', ...env };
    execFile(bicepPath, args, { cwd: repositoryRoot, env: childEnv, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({ code: error ? Number(error.code ?? 1) : 0, output: `${stdout}${stderr}` });
    });
  });
}

/** `describe` for tests that need the CLI: they run where there is one, fail under REQUIRE_BICEP=1 where there is none, and are left out otherwise, saying so once. */
export function describeWithBicep(name: string, body: () => void): void {
  if (bicepPath) describe(name, body);
  else if (process.env.REQUIRE_BICEP === '1')
    describe(name, () => {
      it('has a Bicep CLI (REQUIRE_BICEP=1)', () => {
        throw new Error('No Bicep CLI found: tools/bicep.sh restores it (with the .NET SDK), or put bicep on PATH');
      });
    });
  else {
    process.stderr.write(`No Bicep CLI: "${name}" does not run (tools/bicep.sh restores one with the .NET SDK; or put bicep on PATH)\n`);
    describe.skip(name, body);
  }
}
