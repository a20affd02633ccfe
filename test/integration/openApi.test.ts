/**
 * The OpenAPI document: valid OpenAPI 3.1 by a real validator, and describing every
 * registered route and nothing else. The registrations are the real ones, loaded through the
 * local host's functions-core.
 */
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { buildOpenApiDocument } from '../../src/openapi/openApiDocument';
import { registeredFunctions } from '../../tools/localHost/coreApi';
import { collectHttpRoutes } from '../../tools/localHost/functionRegistrations';
import { matchRoute } from '../../tools/localHost/routeTemplate';

process.env.MANAGEMENT_BASE_URL = 'http://127.0.0.1:9';
process.env.LIFECYCLE_BASE_URL = 'http://127.0.0.1:9';
// eslint-disable-next-line @typescript-eslint/no-require-imports
require('../../functions/index');

const document = buildOpenApiDocument({ providerNamespace: 'Vendor', version: '0.0.0-test' });
const routes = collectHttpRoutes(registeredFunctions());

/** A concrete path for an OpenAPI path template: each parameter gets a plausible value. */
function samplePath(template: string): string {
  const samples: Record<string, string> = {
    scope: 'subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg',
    id: '00000000-0000-4000-8000-000000000000',
    projectId: '42',
    environmentId: '6f1a2b3c-1234-4abc-9def-0123456789ab',
  };
  return template.replace(/\{(\w+)\}/g, (_match, name: string) => samples[name] ?? 'sample');
}

describe('openapi.json', () => {
  it('is valid OpenAPI 3.1', () => {
    const output = execFileSync(process.execPath, [resolve(__dirname, '..', 'helpers', 'validateOpenApi.mjs')], { input: JSON.stringify(document) }).toString();
    const result = JSON.parse(output) as { valid: boolean; version: string; errors: unknown[] };
    expect(result.errors).toEqual([]);
    expect(result).toMatchObject({ valid: true, version: '3.1' });
  });

  it('describes every registered route, each by the one route the host picks for it, and nothing else', () => {
    const served = new Map<string, string[]>();
    for (const [path, methods] of Object.entries(document.paths)) {
      for (const method of Object.keys(methods)) {
        const matching = routes.filter((route) => route.methods.has(method.toUpperCase()) && matchRoute(route.template, samplePath(path)));
        // Routes come in precedence order (the host's pick is the first that matches): a path more
        // than one matches (orchestrations/counts, also an {id}) must be the first one's own.
        expect([`${method} ${path}`, matching.length === 1 || (matching.length > 1 && `/${matching[0]!.template.template}` === path)]).toEqual([
          `${method} ${path}`,
          true,
        ]);
        const name = matching[0]!.fn.metadata.name;
        served.set(name, [...(served.get(name) ?? []), `${method} ${path}`]);
      }
    }
    expect(routes.map((route) => route.fn.metadata.name).filter((name) => !served.has(name))).toEqual([]);
    // The two {scope} operations share one catch-all function.
    expect(served.get('scopeOperations')).toHaveLength(2);
  });
});
