/**
 * tools/withNode.sh runs a command with Node <major> first on PATH (fetched from the npm registry
 * once, then kept), so that what the command starts by name (`node`, npm's scripts, jest) is that
 * Node; it refuses what is not a major number.
 */
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';

const withNode = resolve(__dirname, '..', '..', '..', 'tools', 'withNode.sh');

it.each(['22', '24'])(
  'runs the command with Node %s, and what it starts by name too',
  (major) => {
    // `sh -c` finds `node` on PATH as npm's scripts and #!/usr/bin/env node do.
    const run = spawnSync(withNode, [major, 'sh', '-c', 'node -p process.versions.node'], { encoding: 'utf8', timeout: 180_000 });
    expect(run.status).toBe(0);
    expect(run.stdout.trim().split('.')[0]).toBe(major);
  },
  200_000,
);

it.each([
  ['a word', 'lts'],
  ['a full version', '22.1.0'],
  ['nothing to run', undefined],
])('refuses %s, saying how to call it', (_name, major) => {
  const run = spawnSync(withNode, major === undefined ? ['22'] : [major, 'node', '-v'], { encoding: 'utf8' });
  expect(run.status).toBe(2);
  expect(run.stderr).toMatch(/^usage: tools\/withNode\.sh <major> <command>/);
});
