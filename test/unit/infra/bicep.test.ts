/**
 * infra/ through the Bicep CLI (./bicepCli.ts), each command run once for the file: main.bicep
 * compiles to exactly the committed infra/main.json, which every other test of this folder reads;
 * nothing of infra/ draws a lint warning (a rule turned off in bicepconfig.json says why beside
 * it); and main.bicepparam, as azd compiles it with the environment's variables, gives the
 * parameters azd deploys with, and refuses at compile time a region without Flex Consumption and (in
 * an OPERATION_ROLES of one entry) an unknown role or a misspelt property.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseTree, findNodeAtLocation, visit } from 'jsonc-parser';
import { type Json, type JsonObject, repositoryRoot } from './armTemplate';
import { bicep, bicepVersion, describeWithBicep } from './bicepCli';

/** The azd environment's variables main.bicepparam requires (azd sets them itself). */
const azdVariables = { AZURE_ENV_NAME: 'gateway-test', AZURE_LOCATION: 'westus3' };

/** The template without the compiler's own stamp (its version, and a hash of the rest), in every nested template too. */
function withoutGenerator(value: Json): Json {
  if (Array.isArray(value)) return value.map(withoutGenerator);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).filter(([key]) => key !== '_generator').map(([key, item]) => [key, withoutGenerator(item)]));
  return value;
}

describeWithBicep('infra/ compiled and linted by the Bicep CLI', () => {
  const folder = mkdtempSync(join(tmpdir(), 'bicep-'));
  const compiled = join(folder, 'main.json');
  let build: { code: number; output: string };
  let lint: { code: number; output: string };
  let parameters: { code: number; output: string };
  let unknownRole: { code: number; output: string };
  let misspelt: { code: number; output: string };

  beforeAll(async () => {
    // The CLI is slow to start (a few seconds): every command at once, once.
    [build, lint, parameters, unknownRole, misspelt] = await Promise.all([
      bicep(['build', 'infra/main.bicep', '--outfile', compiled]),
      bicep(['lint', '--pattern', 'infra/**/*.bicep*'], azdVariables),
      bicep(['build-params', 'infra/main.bicepparam', '--stdout'], { ...azdVariables, OPERATION_ROLES: '[{"role":"Reader","scope":"/subscriptions/00000000-0000-0000-0000-000000000000"}]' }),
      bicep(['build-params', 'infra/main.bicepparam', '--stdout'], { ...azdVariables, OPERATION_ROLES: '[{"role":"Owner","scope":"/subscriptions/x"}]' }),
      bicep(['build-params', 'infra/main.bicepparam', '--stdout'], { ...azdVariables, AZURE_LOCATION: 'westindia', OPERATION_ROLES: '[{"role":"Reader","scpoe":"/subscriptions/x"}]' }),
    ]);
  }, 120_000);
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it('compiles main.bicep to the committed main.json (bicep build infra/main.bicep after changing infra/)', () => {
    expect(build).toEqual({ code: 0, output: '' });
    const committed = JSON.parse(readFileSync(join(repositoryRoot, 'infra', 'main.json'), 'utf8')) as JsonObject;
    const fresh = JSON.parse(readFileSync(compiled, 'utf8')) as JsonObject;
    expect(withoutGenerator(committed)).toEqual(withoutGenerator(fresh));
    // Compiled by the version tools/bicep.sh restores, so that the file changes only with infra/.
    expect(((committed.metadata as JsonObject)._generator as JsonObject).version).toMatch(new RegExp(`^${bicepVersion.replace(/\./g, '\\.')}\\.`));
    // Byte for byte with that version: the file is the compiler's output, not edited by hand.
    if (((fresh.metadata as JsonObject)._generator as JsonObject).version === ((committed.metadata as JsonObject)._generator as JsonObject).version)
      expect(readFileSync(join(repositoryRoot, 'infra', 'main.json'), 'utf8')).toBe(readFileSync(compiled, 'utf8'));
  });

  it('lints every file of infra/ without a warning', () => {
    expect(lint).toEqual({ code: 0, output: '' });
  });

  it('turns no lint rule off without saying why beside it (infra/bicepconfig.json)', () => {
    const text = readFileSync(join(repositoryRoot, 'infra', 'bicepconfig.json'), 'utf8');
    const rules = findNodeAtLocation(parseTree(text)!, ['analyzers', 'core', 'rules']);
    const commentLines = new Set<number>();
    visit(text, { onComment: (_offset, _length, startLine) => commentLines.add(startLine) });
    const lineOf = (offset: number) => text.slice(0, offset).split('\n').length - 1;
    const silenced = (rules?.children ?? []).filter((rule) => findNodeAtLocation(rule.children![1]!, ['level'])?.value === 'off');
    expect(silenced.filter((rule) => !commentLines.has(lineOf(rule.offset)) && !commentLines.has(lineOf(rule.offset) - 1)).map((rule) => rule.children![0]!.value)).toEqual([]);
  });

  it("compiles main.bicepparam with azd's variables into the parameters azd deploys with", () => {
    expect(parameters.code).toBe(0);
    const given = JSON.parse((JSON.parse(parameters.output) as { parametersJson: string }).parametersJson) as { parameters: Record<string, { value: Json }> };
    expect(given.parameters).toMatchObject({
      environmentName: { value: 'gateway-test' },
      location: { value: 'westus3' },
      instanceMemoryMB: { value: 2048 },
      operationRoles: { value: [{ role: 'Reader', scope: '/subscriptions/00000000-0000-0000-0000-000000000000' }] },
      notifySigningSecret: { value: '' },
    });
  });

  // With one entry; an array of several the compiler widens to what its entries share, and then
  // Resource Manager refuses the value when it validates the deployment, naming the entry
  // (operationRoles' type, policy.test.ts).
  it('refuses at compile time a role of OPERATION_ROLES it does not know, naming the property and the roles it knows', () => {
    expect(unknownRole.code).not.toBe(0);
    expect(unknownRole.output).toMatch(/Error BCP036: The property "role" expected a value of type "'API Management Service Contributor' \| .*'Reader' \| 'Service Health Security Reader'" but the provided value is of type "'Owner'"/);
  });

  it('refuses at compile time a misspelt property of OPERATION_ROLES and a region without Flex Consumption', () => {
    expect(misspelt.code).not.toBe(0);
    expect(misspelt.output).toContain('Error BCP037: The property "scpoe" is not allowed on objects of type "{ role: operationRoleName, scope: string }". Permissible properties include "scope".');
    expect(misspelt.output).toMatch(/Error BCP033: Expected a value of type "'australiaeast' \| .*" but the provided value is of type "'westindia'"/);
  });
});
