/**
 * What azd reads besides infra/main.json: infra/main.bicep, which passes main.json's parameters
 * through and hands back its outputs; infra/main.bicepparam, which gives them azd environment
 * variables; and azure.yaml. No Bicep compiler runs here, so main.bicep is read with regular
 * expressions: it must stay as plain as they expect (a `param` line each, the module's
 * `name: name` lines, an `output` line each).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Json, type JsonObject, mainTemplate, repositoryRoot } from './armTemplate';

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
    const expected = Object.entries(parameters).map(([name, { type, defaultValue }]) => ({ name, type, ...(defaultValue === undefined ? {} : { defaultValue }) }));
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

describe('infra/main.bicepparam', () => {
  const bicepparam = read('infra/main.bicepparam');
  const parameters = mainTemplate().parameters ?? {};
  const azdVariables: Record<string, string> = { environmentName: 'AZURE_ENV_NAME', location: 'AZURE_LOCATION', resourceGroupName: 'AZURE_RESOURCE_GROUP' };
  const variableOf = (name: string) => azdVariables[name] ?? name.replace(/([a-z])([A-Z])/g, '$1_$2').toUpperCase();
  /** What readEnvironmentVariable's default must say, as text, for a parameter's default; and what turns the text back. */
  const textOf = (type: string, value: Json) => (type === 'array' ? JSON.stringify(value) : String(value));
  const conversion: Record<string, string> = { int: 'int', bool: 'bool', array: 'json' };

  it('is for main.bicep, and gives every parameter of main.json, in its order, from the azd variable of its name with the template\'s default', () => {
    expect(bicepparam).toMatch(/^using 'main\.bicep'$/m);
    const given = [...bicepparam.matchAll(/^param (\w+) = (.+)$/gm)].map(([, name, expression]) => [name, expression]);
    const expected = Object.entries(parameters).map(([name, { type, defaultValue }]) => {
      const read = `readEnvironmentVariable('${variableOf(name)}'${defaultValue === undefined ? '' : `, '${textOf(type, defaultValue)}'`})`;
      return [name, conversion[type] ? `${conversion[type]}(${read})` : read];
    });
    expect(given).toEqual(expected);
    // Every default is text a Bicep string literal holds as written (no quote, no backslash).
    expect(given.filter(([, expression]) => /\\/.test(expression!))).toEqual([]);
  });

  it('reads each app setting of the template from the variable of that setting', () => {
    const settings = (mainTemplate().variables?.appSettings ?? {}) as JsonObject;
    const fromParameter = Object.entries(settings).map(([setting, value]) => [setting, variableOf(/^\[parameters\('(\w+)'\)\]$/.exec(String(value))?.[1] ?? '')]);
    expect(fromParameter).toEqual(Object.keys(settings).map((setting) => [setting, setting]));
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
