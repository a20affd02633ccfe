/**
 * The layers hold (docs/architecture.md, "The rooms"): each folder of src/ imports only the
 * layers below its own, type imports included; code outside a folder (the rest of src/,
 * functions/, tools/, bench/) reaches it through its public face, its index.ts; no file needs
 * another that needs it back, type imports included; and no source file outgrows what a reader
 * holds in mind. Imports are read as written (`import ... from`, `export ... from`,
 * `require(...)`, `import(...)`); the tests may reach inside a folder to test its parts.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const root = resolve(__dirname, '../..');

/**
 * src/ from the bottom up: a unit (a folder, or a file at the top of src/) imports only units of
 * lower layers. Units of one layer do not import each other.
 */
const layers: string[][] = [
  ['src/errors.ts', 'src/concurrency.ts', 'src/version.ts', 'src/loading/'],
  ['src/rules/', 'src/identity/', 'src/spec/'],
  ['src/routes/', 'src/templates/'],
  ['src/settings/', 'src/openapi/'],
  ['src/telemetry/'],
  ['src/storage/', 'src/upstream/'],
  ['src/access/', 'src/orchestration/', 'src/certificates/'],
  ['src/callers/', 'src/notifications/', 'src/health.ts'],
  ['src/approvals/'],
  ['src/services.ts'],
  ['src/calls/', 'src/console/'],
  ['src/http/'],
  ['src/chatops/'],
  ['src/app/'],
];

const maxLines = 400;
const sizedFolders = ['src', 'functions', 'tools', 'bench', 'console'];
const sourceFile = /\.(ts|mts|mjs|js|cjs|css|html)$/;
const codeFolders = ['src', 'functions', 'tools', 'bench'];

function filesUnder(folder: string, keep: (path: string) => boolean): string[] {
  const found: string[] = [];
  for (const name of readdirSync(join(root, folder))) {
    const path = `${folder}/${name}`;
    if (statSync(join(root, path)).isDirectory()) found.push(...filesUnder(path, keep));
    else if (keep(path)) found.push(path);
  }
  return found;
}

/** Every statement that names another module, type imports included. */
const importPatterns = [
  /^\s*(?:import|export)\s+(?:type\s+)?[^'";]*?\s*from\s*['"]([^'"]+)['"]/gm,
  /^\s*import\s*['"]([^'"]+)['"]/gm,
  /\brequire(?:\.resolve)?\(\s*['"]([^'"]+)['"]\s*\)/g,
  /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g,
];

/** A relative specifier as the file it names, from the repository root; undefined for packages. */
function resolveSpecifier(importer: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const base = relative(root, resolve(root, dirname(importer), specifier))
    .split('\\')
    .join('/');
  const candidates = [base, `${base}.ts`, `${base}.mts`, `${base}/index.ts`];
  return candidates.find((candidate) => existsSync(join(root, candidate)) && statSync(join(root, candidate)).isFile()) ?? base;
}

function importsOf(file: string): string[] {
  const text = readFileSync(join(root, file), 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/^\s*\/\/.*$/gm, '');
  const imports = new Set<string>();
  for (const pattern of importPatterns) {
    for (const match of text.matchAll(pattern)) {
      const target = resolveSpecifier(file, match[1]!);
      if (target !== undefined) imports.add(target);
    }
  }
  return [...imports];
}

const codeFiles = codeFolders.flatMap((folder) => filesUnder(folder, (path) => /\.(ts|mts|mjs)$/.test(path)));
const importsByFile = new Map(codeFiles.map((file) => [file, importsOf(file)]));
const sourceFiles = codeFiles.filter((file) => file.startsWith('src/'));

/** The unit of src/ a file belongs to: its top folder (`src/calls/`), or itself at the top of src/. */
function unitOf(file: string): string | undefined {
  const parts = file.split('/');
  if (parts[0] !== 'src') return undefined;
  return parts.length > 2 ? `src/${parts[1]}/` : file;
}

const layerOf = new Map(layers.flatMap((units, index) => units.map((unit) => [unit, index] as const)));

it('reads the import graph, type imports included', () => {
  expect(importsByFile.get('src/app/services.ts')).toContain('src/settings/index.ts');
  expect(importsByFile.get('src/services.ts')).toContain('src/orchestration/index.ts');
});

it('places every unit of src/ in a layer', () => {
  const units = new Set(sourceFiles.map(unitOf));
  expect([...units].filter((unit) => unit !== undefined && !layerOf.has(unit))).toEqual([]);
});

it('keeps each unit of src/ to the layers below its own', () => {
  const offending: string[] = [];
  for (const file of sourceFiles) {
    const unit = unitOf(file)!;
    for (const target of importsByFile.get(file)!) {
      const targetUnit = unitOf(target);
      if (targetUnit === undefined || targetUnit === unit) continue;
      if (!(layerOf.get(targetUnit)! < layerOf.get(unit)!)) offending.push(`${file} (${unit}) imports ${target} (${targetUnit})`);
    }
  }
  expect(offending).toEqual([]);
});

it('reaches a folder of src/ from outside it only through its index.ts', () => {
  const offending: string[] = [];
  for (const [file, imports] of importsByFile) {
    const own = unitOf(file);
    for (const target of imports) {
      const unit = unitOf(target);
      if (unit === undefined || !unit.endsWith('/') || unit === own) continue;
      if (target !== `${unit}index.ts`) offending.push(`${file} imports ${target}`);
    }
  }
  expect(offending).toEqual([]);
});

it('has no import cycle among the files of src/, functions/, tools/ and bench/, type imports included', () => {
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
  for (const file of codeFiles) if (state.get(file) === undefined) visit(file);
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
