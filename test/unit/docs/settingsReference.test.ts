/**
 * docs/settings.md is the settings reference: each setting the app reads (the schema of
 * src/settings/config.ts) and each the local host reads (`env.NAME` in tools/) has a row there, and each
 * row names a setting that is read. local.settings.sample.json uses documented settings only.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'jsonc-parser';
import { settingNames } from '../../../src/settings/config';
import { readDocument, repositoryRoot } from '../../helpers/markdownDocs';

/** Settings of the platform the app never reads itself, named in the sample as Core Tools expects. */
const platformSettings = new Set(['FUNCTIONS_WORKER_RUNTIME']);
/** What tools/ reads from its environment that is no setting of the app. */
const notSettings = new Set(['PATH', 'HOME']);

function sourceFiles(folder: string): string[] {
  return readdirSync(join(repositoryRoot, folder), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.(ts|mjs)$/.test(entry.name))
    .map((entry) => join(entry.parentPath, entry.name));
}

/** `env.NAME` and `env['NAME']` read by the local host's code. */
function localHostSettings(): string[] {
  const names = sourceFiles('tools').flatMap((file) =>
    [...readFileSync(file, 'utf8').matchAll(/\benv(?:\.([A-Za-z_][A-Za-z0-9_]*)|\[['"]([A-Za-z_][A-Za-z0-9_]*)['"]\])/g)].map((match) => match[1] ?? match[2]!),
  );
  return [...new Set(names)].filter((name) => !notSettings.has(name));
}

/** The setting names in the first cell of each table row of docs/settings.md. */
function documentedSettings(): Set<string> {
  const rows = readDocument('docs/settings.md')
    .split('\n')
    .filter((line) => line.startsWith('| `'));
  return new Set(rows.flatMap((row) => [...row.split('|')[1]!.matchAll(/`([A-Za-z_][A-Za-z0-9_]*)`/g)].map((match) => match[1]!)));
}

function failWith(problem: string, names: string[]): void {
  if (names.length > 0) throw new Error(`${problem}:\n  ${names.join('\n  ')}`);
}

describe('docs/settings.md', () => {
  const documented = documentedSettings();
  const read = [...new Set([...settingNames, ...localHostSettings()])];

  it('reads the settings of both the schema and the local host (the check has something to check)', () => {
    expect(settingNames).toEqual(expect.arrayContaining(['UPSTREAM_STATIC_TOKEN', 'MANAGEMENT_BASE_URL']));
    expect(localHostSettings()).toEqual(expect.arrayContaining(['LOCAL_HOST_KEYS', 'EMULATOR_PAGE_SIZE']));
  });

  it('has a row for every setting read', () => {
    failWith(
      'These settings are read but have no row in docs/settings.md (add one to its table: name, meaning, default)',
      read.filter((name) => !documented.has(name)),
    );
  });

  it('documents no setting that nothing reads', () => {
    failWith(
      'docs/settings.md has rows for settings nothing reads (remove them, or declare the setting in src/settings/config.ts)',
      [...documented].filter((name) => !read.includes(name)),
    );
  });

  it('is what local.settings.sample.json draws on', () => {
    const sample = parse(readFileSync(join(repositoryRoot, 'local.settings.sample.json'), 'utf8')) as { Values: Record<string, string> };
    failWith(
      'local.settings.sample.json sets settings docs/settings.md does not describe',
      Object.keys(sample.Values).filter((name) => !documented.has(name) && !platformSettings.has(name)),
    );
  });
});
