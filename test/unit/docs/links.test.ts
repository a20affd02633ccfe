/** Every relative link of the README and docs/ leads to a file of the repository, and to a heading of it when it names one. */
import { existsSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { documentPaths, headingAnchors, linkTargets, repositoryRoot } from '../../helpers/markdownDocs';

describe.each(documentPaths())('the links of %s', (path) => {
  it('resolve to files and headings of the repository', () => {
    const broken: string[] = [];
    for (const target of linkTargets(path)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: and the like leave the repository
      const [file, anchor] = target.split('#') as [string, string | undefined];
      const targetPath = file === '' ? path : normalize(join(dirname(path), decodeURIComponent(file)));
      if (relative(repositoryRoot, join(repositoryRoot, targetPath)).startsWith('..') || !existsSync(join(repositoryRoot, targetPath))) {
        broken.push(`${target}: no file ${targetPath}`);
      } else if (anchor !== undefined && targetPath.endsWith('.md') && !headingAnchors(targetPath).has(anchor)) {
        broken.push(`${target}: ${targetPath} has no heading #${anchor}`);
      }
    }
    expect(broken).toEqual([]);
  });
});
