/**
 * The layers hold (docs/architecture.md, "Layers"): what the engine, storage, the upstream client,
 * telemetry, certificates and caller rights use never comes from the HTTP layer or above; no two
 * modules of src/ need each other's values to load; and no source file outgrows what a reader
 * holds in mind. Imports are read as written (`import ... from`, `export ... from`, `require(...)`,
 * `import(...)`); `import type` is left out: the compiler erases it, so it orders nothing at load.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const root = resolve(__dirname, '../..');

/** Folders below the HTTP layer, and what none of them may import. */
const lowerLayers = ['src/rules/', 'src/orchestration/', 'src/storage/', 'src/upstream/', 'src/telemetry/', 'src/certificates/', 'src/access/'];
const higherLayers = ['src/http/', 'src/approvals/', 'src/chatops/', 'src/console/', 'src/templates/', 'src/services.ts', 'functions/'];

/** The shared rules sit below every layer: they may import only each other and the app's error type. */
const rulesFolder = 'src/rules/';
const rulesMayImport = [rulesFolder, 'src/errors.ts'];

const maxLines = 400;
const sizedFolders = ['src', 'functions', 'tools', 'bench', 'console'];
const sourceFile = /\.(ts|mts|mjs|js|cjs|css|html)$/;

function filesUnder(folder: string, keep: (path: string) => boolean): string[] {
  const found: string[] = [];
  for (const name of readdirSync(join(root, folder))) {
    const path = `${folder}/${name}`;
    if (statSync(join(root, path)).isDirectory()) found.push(...filesUnder(path, keep));
    else if (keep(path)) found.push(path);
  }
  return found;
}

/** Statements that load a module when this one loads (or when it calls `require`). */
const valueImportPatterns = [
  /^\s*import\s+(?!type\s)([^'";]*?)\s*from\s*['"]([^'"]+)['"]/gm,
  /^\s*import\s*['"]([^'"]+)['"]/gm,
  /^\s*export\s+(?!type\s)([^'";]*?)\s*from\s*['"]([^'"]+)['"]/gm,
  /\brequire\(\s*['"]([^'"]+)['"]\s*\)/g,
  /(?<!typeof\s*)\bimport\(\s*['"]([^'"]+)['"]\s*\)/g,
];

/** `import { type A, type B } from` (or `export {...} from`) names only types: the compiler drops it whole. */
function namesOnlyTypes(clause: string): boolean {
  const named = /^\{([^}]*)\}$/.exec(clause.trim());
  if (!named?.[1]) return false;
  const names = named[1]
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  return names.length > 0 && names.every((name) => name.startsWith('type '));
}

/** A relative specifier as the file it names, from the repository root; undefined for packages. */
function resolveSpecifier(importer: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const base = relative(root, resolve(root, dirname(importer), specifier))
    .split('\\')
    .join('/');
  const candidates = [base, `${base}.ts`, `${base}/index.ts`];
  return candidates.find((candidate) => existsSync(join(root, candidate)) && statSync(join(root, candidate)).isFile()) ?? base;
}

function valueImportsOf(file: string): string[] {
  const text = readFileSync(join(root, file), 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/^\s*\/\/.*$/gm, '');
  const imports = new Set<string>();
  for (const pattern of valueImportPatterns) {
    for (const match of text.matchAll(pattern)) {
      const specifier = match[match.length - 1] as string;
      if (match.length === 3 && namesOnlyTypes(match[1] as string)) continue;
      const target = resolveSpecifier(file, specifier);
      if (target !== undefined) imports.add(target);
    }
  }
  return [...imports];
}

const sourceFiles = filesUnder('src', (path) => path.endsWith('.ts'));
const importsByFile = new Map(sourceFiles.map((file) => [file, valueImportsOf(file)]));

it('reads the import graph of src/', () => {
  expect(importsByFile.get('src/app/services.ts')).toContain('src/settings/config.ts');
});

it('keeps the lower layers from importing the HTTP layer or above', () => {
  const offending: string[] = [];
  for (const [file, imports] of importsByFile) {
    if (!lowerLayers.some((folder) => file.startsWith(folder))) continue;
    for (const target of imports) {
      if (higherLayers.some((higher) => target.startsWith(higher))) offending.push(`${file} imports ${target}`);
    }
  }
  expect(offending).toEqual([]);
});

it('keeps the shared rules below everything else', () => {
  const offending = [...importsByFile]
    .filter(([file]) => file.startsWith(rulesFolder))
    .flatMap(([file, imports]) =>
      imports
        .filter((target) => target.startsWith('src/') && !rulesMayImport.some((allowed) => target.startsWith(allowed)))
        .map((target) => `${file} imports ${target}`),
    );
  expect(offending).toEqual([]);
});

it('has no value-import cycle among src/ files', () => {
  const cycles: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (file: string): void => {
    state.set(file, 'open');
    path.push(file);
    for (const target of importsByFile.get(file) ?? []) {
      if (!importsByFile.has(target)) continue;
      if (state.get(target) === 'open') cycles.push([...path.slice(path.indexOf(target)), target].join(' -> '));
      else if (state.get(target) === undefined) visit(target);
    }
    path.pop();
    state.set(file, 'done');
  };
  for (const file of sourceFiles) if (state.get(file) === undefined) visit(file);
  expect(cycles).toEqual([]);
});

it(`keeps every source file within ${maxLines} lines`, () => {
  const long = sizedFolders
    .flatMap((folder) => filesUnder(folder, (path) => sourceFile.test(path)))
    .map((file) => ({ file, lines: readFileSync(join(root, file), 'utf8').split('\n').length - 1 }))
    .filter(({ lines }) => lines > maxLines)
    .map(({ file, lines }) => `${file}: ${lines} lines`);
  expect(long).toEqual([]);
});
