/**
 * What azd reads besides infra/main.json: infra/main.bicep, which passes main.json's parameters
 * through and hands back its outputs; infra/main.parameters.json, which gives them azd environment
 * variables; and azure.yaml. No Bicep compiler runs here, so main.bicep is read with regular
 * expressions: it must stay as plain as they expect (a `param` line each, the module's
 * `name: name` lines, an `output` line each).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Json, type JsonObject, mainTemplate, readJson, repositoryRoot } from './armTemplate';

const read = (relativePath: string) => readFileSync(join(repositoryRoot, relativePath), 'utf8');

/** A Bicep literal as JSON: 'text' (no escapes inside), a number, true/false, []. */
function literal(text: string): Json {
  if (/^'[^'\\]*'$/.test(text)) return text.slice(1, -1);
  if (text === '[]') return [];
  return JSON.parse(text) as Json;
}

describe('infra/main.bicep', () => {
  const bicep = read('infra/main.bicep');
  const template = mainTemplate();
  const parameters = template.parameters ?? {};

  it('targets the subscription and deploys main.json as its one module', () => {
    expect(bicep).toMatch(/^targetScope = 'subscription'$/m);
    expect([...bicep.matchAll(/^module (\w+) '([^']+)' = \{$/gm)].map((match) => [match[1], match[2]])).toEqual([['app', 'main.json']]);
    expect([...bicep.matchAll(/^resource /gm)]).toEqual([]);
  });

  it("declares each of main.json's parameters: same name, type and default, @secure() for a securestring", () => {
    const declared = [...bicep.matchAll(/^((?:@.+\n)*)param (\w+) (\w+)(?: = (.+))?$/gm)].map(([, decorators, name, type, defaultValue]) => ({
      name,
      type: decorators!.includes('@secure()') ? `secure${type}` : type,
      ...(defaultValue === undefined ? {} : { defaultValue: literal(defaultValue) }),
    }));
    // A secret has no default in main.json (a deployment names each, if only as empty); azd would
    // stop to ask for one whose variable is not set, so main.bicep makes "not set" empty: no secret,
    // no setting. An empty default is no secret (the Bicep linter flags only a non-empty one).
    const expected = Object.entries(parameters).map(([name, { type, defaultValue }]) => ({
      name,
      type,
      ...(defaultValue === undefined ? (type === 'securestring' ? { defaultValue: '' } : {}) : { defaultValue }),
    }));
    expect(declared).toEqual(expected);
  });

  it('passes each parameter to the module under its own name, and nothing else', () => {
    const block = /^ {2}params: \{\n([\s\S]*?)\n {2}\}$/m.exec(bicep)?.[1] ?? '';
    expect(block.split('\n').map((line) => line.trim())).toEqual(Object.keys(parameters).map((name) => `${name}: ${name}`));
  });

  it("hands back each of main.json's outputs, with its type", () => {
    const outputs = [...bicep.matchAll(/^output (\w+) (\w+) = app\.outputs\.(\w+)$/gm)].map(([, name, type, from]) => [name, type, from]);
    expect(outputs).toEqual(Object.entries(template.outputs ?? {}).map(([name, { type }]) => [name, type, name]));
    expect(bicep.split('\n').filter((line) => line.startsWith('output ')).length).toBe(outputs.length);
  });
});

describe('infra/main.parameters.json', () => {
  const given = readJson<{ parameters: Record<string, { value: Json }> }>('infra/main.parameters.json').parameters;
  const parameters = mainTemplate().parameters ?? {};

  it("names parameters of main.json only, and gives each without a default one (azd prompts for one whose variable is empty)", () => {
    expect(Object.keys(given).filter((name) => !(name in parameters))).toEqual([]);
    expect(Object.keys(parameters).filter((name) => parameters[name]!.defaultValue === undefined && !(name in given))).toEqual([]);
  });

  it('gives each string parameter the azd environment variable of its name (the setting it becomes), with its default when it has one', () => {
    const variables = Object.entries(given).filter(([, { value }]) => typeof value === 'string');
    expect(variables.length).toBeGreaterThan(0);
    expect(variables.filter(([name]) => !/string/.test(parameters[name]!.type))).toEqual([]);
    const azdVariables: Record<string, string> = { environmentName: 'AZURE_ENV_NAME', location: 'AZURE_LOCATION', resourceGroupName: 'AZURE_RESOURCE_GROUP' };
    const variableOf = (name: string) => azdVariables[name] ?? name.replace(/([a-z])([A-Z])/g, '$1_$2').toUpperCase();
    // An unset variable is empty, which would override the template's default (an empty
    // MANAGEMENT_BASE_URL stops the app's start): `${NAME=default}` keeps it, as azd substitutes.
    const withDefault = (name: string) => {
      const defaultValue = parameters[name]!.defaultValue;
      return typeof defaultValue === 'string' && defaultValue !== '' ? `=${defaultValue}` : '';
    };
    expect(variables.map(([name, { value }]) => [name, value])).toEqual(variables.map(([name]) => [name, `\${${variableOf(name)}${withDefault(name)}}`]));
    const settings = (mainTemplate().variables?.appSettings ?? {}) as JsonObject;
    expect(Object.entries(settings).filter(([setting, value]) => value !== `[parameters('${Object.keys(given).find((name) => variableOf(name) === setting)}')]`)).toEqual([]);
  });
});

describe('azure.yaml', () => {
  const azure = read('azure.yaml');
  const site = JSON.stringify(mainTemplate());

  it('deploys the service api, a TypeScript function app, as packaged, to the site tagged with its name', () => {
    const service = /^services:\n {2}(\w+):\n((?: {4}.*\n)+)/m.exec(azure);
    expect(service?.[1]).toBe('api');
    expect(service?.[2]).toMatch(/^ {4}project: \.$/m);
    expect(service?.[2]).toMatch(/^ {4}host: function$/m);
    expect(service?.[2]).toMatch(/^ {4}language: ts$/m);
    expect(service?.[2]).toMatch(/^ {4}remoteBuild: false$/m);
    expect(service?.[2]).toMatch(/^ {6}prepackage:\n(?: {8}.*\n)* {8}run: npm run package$/m);
    expect(site).toContain("createObject('azd-service-name', 'api')");
  });
});
