/**
 * Every example policy in the README and docs/ (a JSON block that is an array of rules with
 * `callers`) starts as written: the settings' own check, the one start-up runs, takes it as
 * ACCESS_POLICY. A reader pastes an example first and edits it after.
 */
import { parseConfig } from '../../../src/settings/config';
import { documentPaths, fencedBlocks } from '../../helpers/markdownDocs';

const minimal = { MANAGEMENT_BASE_URL: 'https://management.example.com', LIFECYCLE_BASE_URL: 'https://lcs.example.com' };

function isPolicy(value: unknown): boolean {
  return Array.isArray(value) && value.length > 0 && value.every((rule) => typeof rule === 'object' && rule !== null && 'callers' in rule);
}

const examples = documentPaths().flatMap((path) =>
  fencedBlocks(path)
    .filter((block) => block.language === 'json')
    .filter((block) => {
      try {
        return isPolicy(JSON.parse(block.text));
      } catch {
        return false;
      }
    }),
);

it('finds the example policies', () => {
  expect(examples.map((block) => block.where.split(':')[0])).toEqual(expect.arrayContaining(['docs/caller-rights.md', 'docs/chatops.md']));
});

it.each(examples.map((block) => [block.where, block.text] as const))('%s starts as written', (_where, text) => {
  let problems: unknown;
  try {
    parseConfig({ ...minimal, ACCESS_POLICY: text });
  } catch (error) {
    problems = (error as { problems?: string[] }).problems ?? error;
  }
  expect(problems).toBeUndefined();
});
