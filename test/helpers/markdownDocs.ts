/**
 * The repository's documents as the tests read them: the README and every file of docs/, their
 * fenced blocks with the HTML comment just before each (the block's mark), their links, and the
 * anchors GitHub makes of their headings.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const repositoryRoot = resolve(__dirname, '..', '..');

/** README.md, then docs/*.md in name order, as paths relative to the repository. */
export function documentPaths(): string[] {
  const docs = readdirSync(join(repositoryRoot, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort();
  return ['README.md', ...docs.map((name) => `docs/${name}`)];
}

export function readDocument(path: string): string {
  return readFileSync(join(repositoryRoot, path), 'utf8');
}

export interface FencedBlock {
  /** Where it is: `docs/orchestrations.md:42` (the line of its opening fence). */
  where: string;
  language: string;
  text: string;
  /** The HTML comment on the line before the opening fence (blank lines between allowed), without `<!--`/`-->`. */
  mark?: string;
}

export function fencedBlocks(path: string): FencedBlock[] {
  const lines = readDocument(path).split('\n');
  const blocks: FencedBlock[] = [];
  for (let index = 0; index < lines.length; index++) {
    const opening = /^```(\S*)\s*$/.exec(lines[index]!);
    if (!opening) continue;
    const end = lines.findIndex((line, at) => at > index && /^```\s*$/.test(line));
    if (end < 0) throw new Error(`${path}:${index + 1}: a fenced block is not closed`);
    let before = index - 1;
    while (before >= 0 && lines[before]!.trim() === '') before--;
    const mark = before >= 0 ? /^<!--\s*(.*?)\s*-->$/.exec(lines[before]!.trim())?.[1] : undefined;
    blocks.push({ where: `${path}:${index + 1}`, language: opening[1]!, text: lines.slice(index + 1, end).join('\n'), mark });
    index = end;
  }
  return blocks;
}

/** The text outside fenced blocks, where links and headings are read. */
function prose(path: string): string {
  return readDocument(path).replace(/^```[\s\S]*?^```\s*$/gm, '');
}

/** Link targets of `[text](target)`, without titles. */
export function linkTargets(path: string): string[] {
  return [...prose(path).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((match) => match[1]!);
}

/** The anchors GitHub makes of a document's headings: lower case, punctuation dropped, spaces as hyphens. */
export function headingAnchors(path: string): Set<string> {
  const anchors = new Set<string>();
  for (const match of prose(path).matchAll(/^#{1,6}\s+(.+?)\s*$/gm)) {
    anchors.add(
      match[1]!
        .toLowerCase()
        .replace(/[^\p{L}\p{N}\s_-]/gu, '')
        .replace(/\s/g, '-'),
    );
  }
  return anchors;
}
