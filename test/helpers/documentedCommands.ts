/**
 * The command blocks of the README and docs/, sorted by what the tests do with each, as its mark
 * (the HTML comment just before the block) says:
 * - `<!-- local start -->`: a block whose `npm start` line (one command, continued with `\` over
 *   lines if long) starts the app the blocks after it use;
 * - `<!-- file: NAME -->`: a file the commands use (a body, a script), written before any runs;
 * - `<!-- package start -->`: run by test/e2e/deployPackage.e2e.test.ts in the unpacked package;
 * - `<!-- not run by the tests: WHY -->`: a block that cannot run here (Azure, a sign-in), shown
 *   but not run (a tool the reader installs is no reason: such a block runs);
 * - no mark: a shell block run as it is written, against the app of the last local start.
 */
import { documentPaths, fencedBlocks, type FencedBlock } from './markdownDocs';

/** Languages of blocks a reader runs or saves: every one of them is run, written or marked. */
const commandLanguages = new Set(['sh', 'bash', 'shell', 'console', 'js', 'mjs', 'cjs', 'ts', 'python', 'py', 'powershell', 'pwsh']);
const shellLanguages = new Set(['sh', 'bash', 'shell']);

export type DocumentedStep =
  | { kind: 'start'; block: FencedBlock; command: string }
  | { kind: 'file'; block: FencedBlock; name: string }
  | { kind: 'package start'; block: FencedBlock }
  | { kind: 'not run'; block: FencedBlock; reason: string }
  | { kind: 'run'; block: FencedBlock };

/** The `npm start` line of a start block (its settings may be continued over lines ending in `\`), or why the block is not one. */
function startCommandOf(block: FencedBlock): string {
  const lines = block.text
    .replace(/\s*\\\n\s*/g, ' ')
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.trim().startsWith('#'));
  if (lines.length !== 1 || !/(^|\s)npm start(\s|$)/.test(lines[0]!))
    throw new Error(`${block.where}: a local start block holds one npm start line and nothing else`);
  return lines[0]!;
}

function stepOf(block: FencedBlock): DocumentedStep | undefined {
  const { mark } = block;
  if (mark === 'local start') return { kind: 'start', block, command: startCommandOf(block) };
  if (mark === 'package start') return { kind: 'package start', block };
  const file = mark ? /^file: (\S+)$/.exec(mark) : null;
  if (file) return { kind: 'file', block, name: file[1]! };
  const notRun = mark ? /^not run by the tests: (\S.*)$/.exec(mark) : null;
  if (notRun) return { kind: 'not run', block, reason: notRun[1]! };
  if (mark !== undefined)
    throw new Error(`${block.where}: "<!-- ${mark} -->" is no mark the tests know (local start, package start, file: NAME, not run by the tests: WHY)`);
  if (shellLanguages.has(block.language)) return { kind: 'run', block };
  if (commandLanguages.has(block.language))
    throw new Error(
      `${block.where}: a ${block.language} block must be a file (<!-- file: NAME -->) or say why it is not run (<!-- not run by the tests: WHY -->)`,
    );
  return undefined; // data or text (JSON examples, a folder tree): nothing to run
}

/** Every step of every document, in reading order: README.md, then docs/ by name. */
export function documentedSteps(): DocumentedStep[] {
  return documentPaths().flatMap((path) => fencedBlocks(path).flatMap((block) => stepOf(block) ?? []));
}
