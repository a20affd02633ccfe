/**
 * docs/deploy.md against the app it deploys: the paths it tells App Service Authentication to
 * leave anonymous are exactly the app's anonymous routes (a route missing there would be locked
 * behind a sign-in Slack, Teams or a probe cannot make; one too many would be open), and the
 * template parameters it names exist.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { appRoutes } from '../../../src/routes/appRoutes';
import { fencedBlocks, readDocument, repositoryRoot } from '../../helpers/markdownDocs';

const routePrefix = (JSON.parse(readFileSync(join(repositoryRoot, 'host.json'), 'utf8')) as { extensions: { http: { routePrefix: string } } }).extensions.http
  .routePrefix;

/** Each anonymous route's paths, a `{file}` parameter given each value its schema takes. */
function anonymousPaths(): string[] {
  return Object.values(appRoutes)
    .filter((route) => route.authLevel === 'anonymous')
    .flatMap((route) => {
      const file = (route.params?.shape as Record<string, { options?: string[] }> | undefined)?.file;
      const paths = route.route.includes('{file}') ? (file?.options ?? []).map((name) => route.route.replace('{file}', name)) : [route.route];
      return paths.map((path) => `/${routePrefix}/${path}`);
    });
}

it("excludes from App Service Authentication exactly the app's anonymous routes", () => {
  const block = fencedBlocks('docs/deploy.md').find((each) => each.language === 'json' && each.text.includes('excludedPaths'));
  const documented = (JSON.parse(block!.text) as { globalValidation: { excludedPaths: string[] } }).globalValidation.excludedPaths;
  expect(anonymousPaths()).toEqual(expect.arrayContaining(['/api/health', '/api/chatops/slack', '/api/console/assets/console.js']));
  // The console page's address with a slash answers too (a redirect to it): a sign-in there would come first.
  expect([...documented].sort()).toEqual([...anonymousPaths(), `/${routePrefix}/console/`].sort());
});

it('names only parameters the template declares', () => {
  const template = JSON.parse(readFileSync(join(repositoryRoot, 'infra', 'main.json'), 'utf8')) as { parameters: Record<string, unknown> };
  const example = fencedBlocks('docs/deploy.md').find((each) => each.language === 'json' && each.text.includes('"environmentName"'));
  const named = Object.keys((JSON.parse(example!.text) as { parameters: Record<string, unknown> }).parameters);
  expect(named.filter((name) => !(name in template.parameters))).toEqual([]);
  // The secrets have no default, so an az deployment without them would stop to ask: the example passes each.
  const secrets = Object.entries(template.parameters)
    .filter(([, parameter]) => (parameter as { type: string }).type.toLowerCase() === 'securestring')
    .map(([name]) => name);
  expect(secrets.length).toBeGreaterThan(0);
  expect(named).toEqual(expect.arrayContaining(secrets));
  expect(readDocument('docs/deploy.md')).not.toMatch(/FUNCTIONS_WORKER_RUNTIME=|--flexconsumption-location/);
});
