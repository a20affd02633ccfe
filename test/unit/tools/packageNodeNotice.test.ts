/**
 * `npm run package` makes the code cache with the Node the function app runs; when this machine
 * runs another and has not fetched that one yet, it says so before the download starts (about
 * 120 MB) and how to avoid it, instead of fetching silently.
 */
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const codeCacheModule = pathToFileURL(resolve(__dirname, '..', '..', '..', 'tools', 'appCodeCache.mjs')).href;

/** nodeFetchNotice(major, runningMajor, kept) as the ES module answers it. */
function noticeOf(major: string, runningMajor: string, kept: boolean): string | null {
  const script = `import { nodeFetchNotice } from ${JSON.stringify(codeCacheModule)}; console.log(JSON.stringify(nodeFetchNotice(${JSON.stringify(major)}, ${JSON.stringify(runningMajor)}, ${kept}) ?? null));`;
  return JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })) as string | null;
}

it('says before fetching another Node what it fetches, where, how large, and how to avoid it', () => {
  const notice = noticeOf('22', '20', false);
  expect(notice).toMatch(/this machine runs Node 20/);
  expect(notice).toMatch(/fetching Node 22 from the npm registry into \.node-versions\/22\/ \(about 120 MB, once/);
  expect(notice).toMatch(/npm run package -- --node 20/);
});

it.each([
  ['the running Node is the one asked for', '22', '22', false],
  ['a fetched copy is kept', '22', '20', true],
])('says nothing when %s', (_title, major, running, kept) => {
  expect(noticeOf(major, running, kept)).toBeNull();
});
