/**
 * What azd reads besides the template, with azd's own rules rather than regular expressions:
 * azure.yaml against the schema azd publishes (test/fixtures/azd/azure.yaml.json), the service's
 * `remoteBuild` and the project's .funcignore through azd's rule for them (./azdRules.ts, held to
 * azd's own cases), what `azd up` runs (the app built once), and infra/main.bicepparam, which gives
 * main.bicep's parameters from azd environment variables.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv2019 from 'ajv/dist/2019';
import { parse } from 'yaml';
import { deploy, type Json, type JsonObject, mainTemplate, repositoryRoot, requiredParameters } from './armTemplate';
import { resolveRemoteBuild } from './azdRules';
import { bicepVersion } from './bicepCli';

const read = (relativePath: string) => readFileSync(join(repositoryRoot, relativePath), 'utf8');
const fixture = (name: string) => JSON.parse(read(`test/fixtures/azd/${name}`)) as JsonObject;

interface Hook {
  shell?: string;
  run: string;
}
interface Service {
  project: string;
  language: string;
  host: string;
  dist?: string;
  remoteBuild?: boolean;
  hooks?: Record<string, Hook>;
}
interface AzureYaml {
  requiredVersions?: { azd?: string };
  hooks?: Record<string, Hook>;
  workflows?: { up?: { steps: { azd: string }[] } };
  services: Record<string, Service>;
}

// YAML 1.2, as azd reads it (the package comes with @seriousme/openapi-schema-validator, a devDependency).
const azureYaml = parse(read('azure.yaml')) as AzureYaml;
const api = azureYaml.services.api!;

/** azd's schema of azure.yaml, compiled. Schemas of azd's extensions it refers to, for AI hosts only, are not copied: each stands as one that no value passes. */
function schemaValidator() {
  const schema = fixture('azure.yaml.json');
  const ajv = new Ajv2019({ allErrors: true, strict: false, validateFormats: false });
  for (const id of new Set([...JSON.stringify(schema).matchAll(/"\$ref":"(https:[^"#]+)"/g)].map((match) => match[1]!))) ajv.addSchema({ $id: id, not: {} });
  return ajv.compile(schema);
}

describe('azure.yaml', () => {
  it("is valid against azd's published schema", () => {
    const validate = schemaValidator();
    expect(validate(azureYaml) ? [] : validate.errors).toEqual([]);
    expect(Object.values(azureYaml.services).map(({ host }) => host)).toEqual(['function']);
  });

  it('is refused by the schema with a misspelt hook or a remoteBuild that is not a boolean (the check can fail)', () => {
    const validate = schemaValidator();
    expect(validate({ ...azureYaml, services: { api: { ...api, hooks: { prepakage: api.hooks!.prepackage } } } })).toBe(false);
    expect(validate({ ...azureYaml, services: { api: { ...api, remoteBuild: 'false' } } })).toBe(false);
    // An unknown property is no error to azd or its schema: a misspelt remoteBuild leaves it unset, which
    // azd's rule below turns into a build on the server, and the test of this service fails there.
  });

  it('deploys the service api, TypeScript on a function app, to the site the template tags with its name', () => {
    const site = deploy(mainTemplate(), requiredParameters).resources.find(({ type }) => type === 'Microsoft.Web/sites')!;
    expect(Object.keys(azureYaml.services)).toEqual([(site.resource.tags as JsonObject)['azd-service-name']]);
    expect(azureYaml.services.api).toMatchObject({ project: '.', language: 'ts', host: 'function', dist: 'dist/deploy' });
  });
});

describe("azd's rule for remoteBuild and .funcignore", () => {
  const { cases } = fixture('remoteBuildCases.json') as { cases: { name: string; language: string; remoteBuild: boolean | null; funcignore: string | null; remoteBuildResult?: boolean; error?: string }[] };

  it.each(cases.map((each) => [each.name, each] as const))("gives azd's answer in azd's case %s", (_, each) => {
    const expected = each.error === undefined ? { remoteBuild: each.remoteBuildResult } : { error: each.error };
    expect(resolveRemoteBuild(each.language, each.remoteBuild ?? undefined, each.funcignore ?? undefined)).toEqual(expected);
  });

  it('lets azd deploy this service as it is packaged: no build on the server, and no refusal', () => {
    const ignoreFile = join(repositoryRoot, api.project, '.funcignore');
    // azd reads the ignore file of the service's project folder, not of `dist`.
    const funcignore = existsSync(ignoreFile) ? readFileSync(ignoreFile, 'utf8') : undefined;
    expect(resolveRemoteBuild(api.language, api.remoteBuild, funcignore)).toEqual({ remoteBuild: false });
  });
});

describe('azd up', () => {
  const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
  /** How often a command line runs the build script, following `npm run` through package.json's scripts. */
  const buildsOf = (command: string): number =>
    command
      .split(/&&|;|\|\|/)
      .map((part) => /^\s*npm run (\S+)/.exec(part)?.[1])
      .reduce((count, script) => count + (script === undefined ? 0 : script === 'build' ? 1 : buildsOf(scripts[script] ?? '')), 0);

  /**
   * What `azd up` runs, in order, as azd's source has it: the preup hooks; then the steps of a custom
   * `up` workflow (cli/azd/cmd/up.go), or package, provision and deploy. Packaging a Node service runs
   * its prepackage hook, then the `build` script itself (cli/azd/pkg/project/framework_service_node.go);
   * `deploy <service> --from-package` packages nothing (cli/azd/internal/cmd/service_graph.go).
   */
  function upCommands(config: AzureYaml): string[] {
    const packaging = Object.values(config.services).flatMap((service) => [...(service.hooks?.prepackage ? [service.hooks.prepackage.run] : []), 'npm run build']);
    const steps = config.workflows?.up?.steps.map(({ azd }) => azd) ?? ['package --all', 'provision', 'deploy --all'];
    // A package is made once per run of azd: deploy takes the one package made (ServiceOperationCache, cli/azd/pkg/project/service_manager.go).
    const packages = steps.some((step) => /^(package|deploy)\b/.test(step) && !/--from-package\b/.test(step));
    return [...(config.hooks?.preup ? [config.hooks.preup.run] : []), ...(packages ? packaging : [])];
  }

  it('builds the app once, and deploys the zip that build made', () => {
    expect(upCommands(azureYaml).reduce((count, command) => count + buildsOf(command), 0)).toBe(1);
    const deployed = /--from-package (\S+)/.exec(azureYaml.workflows?.up?.steps.at(-1)?.azd ?? '')?.[1];
    // Where `npm run package` writes its zip (tools/package.mjs), and the preup hook runs it.
    expect(read('tools/package.mjs')).toContain(`default: '${deployed}'`);
    expect(azureYaml.hooks?.preup?.run).toBe('npm run package');
    // azd's own up (no workflow) would build twice: the model counts what it should.
    expect(upCommands({ ...azureYaml, hooks: {}, workflows: {} }).reduce((count, command) => count + buildsOf(command), 0)).toBe(2);
  });

  it('provisions before deploying, and needs an azd that honours remoteBuild: false on Flex Consumption (1.23.5)', () => {
    expect(azureYaml.workflows?.up?.steps.map(({ azd }) => azd.split(' ')[0])).toEqual(['provision', 'deploy']);
    const minimum = /^>=\s*(\d+)\.(\d+)\.(\d+)$/.exec(azureYaml.requiredVersions?.azd ?? '')?.slice(1).map(Number);
    expect(minimum).toEqual([1, 23, 5]);
  });
});

describe('infra/main.bicepparam', () => {
  const bicepparam = read('infra/main.bicepparam');
  const parameters = mainTemplate().parameters ?? {};
  const azdVariables: Record<string, string> = { environmentName: 'AZURE_ENV_NAME', location: 'AZURE_LOCATION', resourceGroupName: 'AZURE_RESOURCE_GROUP' };
  const variableOf = (name: string) => azdVariables[name] ?? name.replace(/([a-z])([A-Z])/g, '$1_$2').toUpperCase();
  /** What readEnvironmentVariable's default must say, as text, for a parameter's default; and what turns the text back. */
  const textOf = (type: string, value: Json) => (type === 'array' ? JSON.stringify(value) : String(value));
  const conversion: Record<string, (read: string) => string> = {
    int: (read) => `int(${read})`,
    bool: (read) => `bool(${read})`,
    array: (read) => `json(${read})`,
  };

  it("is for main.bicep, and gives every parameter of main.json, in its order, from the azd variable of its name with the template's default", () => {
    expect(bicepparam).toMatch(/^using 'main\.bicep'$/m);
    const given = [...bicepparam.matchAll(/^param (\w+) = (.+)$/gm)].map(([, name, expression]) => [name, expression!.replace(/^any\((.*)\)$/, '$1')]);
    const expected = Object.entries(parameters).map(([name, { type, defaultValue }]) => {
      const read = `readEnvironmentVariable('${variableOf(name)}'${defaultValue === undefined ? '' : `, '${textOf(type!, defaultValue)}'`})`;
      return [name, conversion[type!]?.(read) ?? read];
    });
    expect(given).toEqual(expected);
    // Every default is text a Bicep string literal holds as written (no quote, no backslash).
    expect(given.filter(([, expression]) => /\\/.test(expression!))).toEqual([]);
  });

  it('reads each app setting of the template from the variable of that setting', () => {
    const settings = (mainTemplate().variables?.settings ?? {}) as JsonObject;
    const fromParameter = Object.entries(settings).map(([setting, value]) => [setting, variableOf(/parameters\('(\w+)'\)/.exec(String(value))?.[1] ?? '')]);
    expect(fromParameter).toEqual(Object.keys(settings).map((setting) => [setting, setting]));
    expect(Object.keys(settings)).toContain('MANAGEMENT_BASE_URL');
  });
});

describe('docs/deploy.md', () => {
  const document = read('docs/deploy.md');

  it('deploys the Bicep with az, links the compiled template, and names the azd and Bicep versions the files need', () => {
    expect(document).toContain('--template-file infra/main.bicep');
    expect(document).toContain('https://portal.azure.com/#create/Microsoft.Template/uri/https%3A%2F%2Fraw.githubusercontent.com%2F<owner>%2F<repository>%2Fmain%2Finfra%2Fmain.json');
    const minimum = /^>=\s*(\S+)$/.exec(azureYaml.requiredVersions?.azd ?? '')?.[1];
    expect(document).toContain(`azd ${minimum} or later`);
    expect(document).toContain(`Bicep CLI ${bicepVersion}`);
  });

  it('says what `azd down` leaves behind, and how to remove it', () => {
    expect(document).toMatch(/What `azd down` leaves behind/);
    expect(document).toContain('az role assignment delete --ids');
  });
});
