/**
 * The documents read in sentences a reader holds at once: none runs past 100 words, and a table
 * cell says what a thing is in at most that many (the explanation goes in the text, which the cell
 * links to). A code span counts as one word, a link as its text.
 */
import { documentPaths, readDocument } from '../../helpers/markdownDocs';

const maxWords = 100;
/** Paragraphs, list items, headings and table cells, each as one line of text, fenced blocks left out. */
function proseUnits(path: string): { text: string; cell: boolean }[] {
  const units: { text: string; cell: boolean }[] = [];
  let paragraph: string[] = [];
  const flush = () => {
    if (paragraph.length > 0) units.push({ text: paragraph.join(' '), cell: false });
    paragraph = [];
  };
  for (const line of readDocument(path)
    .replace(/^```[\s\S]*?^```\s*$/gm, '')
    .split('\n')) {
    const text = line.trim();
    if (text === '' || text.startsWith('|')) {
      flush();
      for (const cell of text.split(/(?<!\\)\|/)) if (cell.trim() !== '') units.push({ text: cell.trim(), cell: true });
      continue;
    }
    if (/^(#+ |[-*] |\d+\. |<!--)/.test(text)) flush();
    paragraph.push(text);
  }
  flush();
  return units;
}

const wordsOf = (text: string) =>
  text
    .replace(/`[^`]*`/g, 'code')
    .replace(/\]\([^)]*\)/g, ']')
    .split(/\s+/)
    .filter((word) => /[\p{L}\p{N}]/u.test(word)).length;

const sentencesOf = (text: string) => text.replace(/`[^`]*`/g, 'Code').split(/(?<=[.!?])\s+(?=[A-Z(*[])/);

const checked = documentPaths();

it.each(checked)('%s: no sentence past 100 words', (path) => {
  const long = proseUnits(path)
    .flatMap((unit) => sentencesOf(unit.text))
    .map((sentence) => ({ words: wordsOf(sentence), starts: sentence.slice(0, 80) }))
    .filter(({ words }) => words > maxWords);
  expect(long).toEqual([]);
});

it.each(checked)('%s: no table cell past 100 words', (path) => {
  const long = proseUnits(path)
    .filter((unit) => unit.cell && wordsOf(unit.text) > maxWords)
    .map((unit) => ({ words: wordsOf(unit.text), starts: unit.text.slice(0, 80) }));
  expect(long).toEqual([]);
});
