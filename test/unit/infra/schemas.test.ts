/**
 * infra/main.json and the parameters file docs/deploy.md shows against the schemas Resource Manager publishes
 * (draft-04, copied into test/fixtures/arm-schemas/ with where they come from): the template against
 * the subscription deployment template schema, each nested template against the schema of the scope
 * it is deployed to, and each resource, nested ones included, against its provider's definition for
 * its type and apiVersion. A type or apiVersion no copied schema defines fails: add the provider's
 * file for that version to the fixtures (or pick a version they have).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv-draft-04';
import { type Json, type JsonObject, mainTemplate, repositoryRoot, resourcesOf, type Template } from './armTemplate';

const schemaFolder = join(repositoryRoot, 'test', 'fixtures', 'arm-schemas');
const schemaBase = 'https://schema.management.azure.com/schemas';
const subscriptionTemplateSchema = `${schemaBase}/2018-05-01/subscriptionDeploymentTemplate.json#`;
const resourceGroupTemplateSchema = `${schemaBase}/2019-04-01/deploymentTemplate.json#`;

interface SchemaFile {
  id: string;
  definitions?: JsonObject;
  [section: string]: Json | undefined;
}

/** Each copied schema by its path under the fixtures folder. */
const schemaFiles: [string, SchemaFile][] = readdirSync(schemaFolder, { recursive: true, withFileTypes: true })
  .filter((entry) => entry.isFile() && entry.name.endsWith('.json'))
  .map((entry) => [relative(schemaFolder, join(entry.parentPath, entry.name)).split(sep).join('/'), JSON.parse(readFileSync(join(entry.parentPath, entry.name), 'utf8')) as SchemaFile]);

/** The section of a provider file that holds the resources a template of each scope may declare. */
const sectionOfScope = { subscription: 'subscription_resourceDefinitions', resourceGroup: 'resourceDefinitions' } as const;
type TemplateScope = keyof typeof sectionOfScope;

const expression = { $ref: 'https://schema.management.azure.com/schemas/common/definitions.json#/definitions/expression' };

/**
 * Where a schema is stricter than Resource Manager, the in-memory copy is changed here, at that one
 * place, and nowhere else (each must still find what it changes: a schema that no longer needs it
 * fails the test, and the exception goes).
 */
const exceptions: { file: string; path: string[]; why: string; change: (schema: Json) => Json; extend?: JsonObject }[] = [
  {
    file: '2018-05-01/subscriptionDeploymentTemplate.json',
    path: ['definitions', 'resource'],
    why: 'It lists, as what a resource may be, every definition of every provider: hundreds of files not copied here. Each resource is checked against its own provider definition instead, so here only the envelope every resource has.',
    change: () => ({ $ref: '#/definitions/resourceBase' }),
  },
  {
    file: '2019-04-01/deploymentTemplate.json',
    path: ['definitions', 'resource'],
    why: 'The same, for a template deployed to a resource group.',
    change: () => ({ $ref: '#/definitions/resourceBase' }),
  },
  ...['2018-05-01/subscriptionDeploymentTemplate.json', '2019-04-01/deploymentTemplate.json'].map((file) => ({
    file,
    path: ['definitions', 'resourceBase', 'allOf', '1', 'properties', 'tags'],
    why: "The envelope wants a resource's tags as an object; the providers' definitions (and Resource Manager) take an expression too.",
    change: (schema: Json) => ({ oneOf: [schema, expression] }),
  })),
  {
    file: '2025-01-01/Microsoft.Storage.json',
    path: ['resourceDefinitions', 'storageAccounts_blobServices_containers', 'properties', 'name'],
    why: "A container's name is held to 63 characters and allows no expression, so the expression that makes `<account>/default/<container>` fails on its own length; Resource Manager checks the name it makes. Allowed as other definitions allow a name: an expression.",
    change: (schema) => ({ oneOf: [schema, expression] }),
  },
  ...['2018-05-01/subscriptionDeploymentTemplate.json', '2019-04-01/deploymentTemplate.json'].flatMap((file) => [
    {
      file,
      path: ['properties', 'contentVersion'],
      why: 'The schema lists no `languageVersion` and no `definitions` (and forbids other properties), while Resource Manager takes languageVersion 2.0 templates, which Bicep emits for user-defined types: the two are added beside contentVersion, the version as the one Bicep writes and the definitions as parameter declarations.',
      change: (schema: Json) => schema,
      extend: {
        languageVersion: { enum: ['2.0'] },
        definitions: { type: 'object', additionalProperties: { $ref: '#/definitions/parameter' } },
      },
    },
  ]),
  ...['2024-11-01/Microsoft.Resources.json', '2025-04-01/Microsoft.Resources.json'].flatMap((file) => [
    {
      file,
      path: ['definitions', 'DeploymentParameter', 'properties', 'value'],
      why: 'A value is `oneOf: [{}, expression]`, and an expression matches both branches, so no expression could pass a nested deployment a value.',
      change: () => ({}),
    },
    {
      file,
      path: ['definitions', 'ExpressionEvaluationOptions', 'properties', 'scope', 'oneOf', '0', 'enum'],
      why: 'Inner, Outer and NotSpecified, while Resource Manager compares them ignoring case and documents "inner".',
      change: (values: Json) => [...(values as string[]), ...(values as string[]).map((value) => value.toLowerCase())],
    },
  ]),
  {
    file: '2024-11-01/Microsoft.Web.json',
    path: ['resourceDefinitions', 'sites_basicPublishingCredentialsPolicies'],
    why: 'Its oneOf branches, ftp and scm, differ only in the end of the name; a name made by an expression matches both, which oneOf refuses. anyOf, as Resource Manager tells them apart by the name it evaluates.',
    change: (definition) => {
      const { oneOf, ...rest } = definition as JsonObject;
      if (!oneOf) throw new Error('sites_basicPublishingCredentialsPolicies has no oneOf any more: remove its exception');
      return { ...rest, anyOf: oneOf };
    },
  },
];

function withExceptions(relativePath: string, file: SchemaFile): SchemaFile {
  const copy = structuredClone(file) as unknown as JsonObject;
  for (const exception of exceptions.filter((candidate) => candidate.file === relativePath)) {
    const parent = exception.path.slice(0, -1).reduce<Json | undefined>((node, key) => (node as JsonObject | undefined)?.[key], copy) as JsonObject | undefined;
    const key = exception.path.at(-1)!;
    if (parent?.[key] === undefined) throw new Error(`The schema exception "${exception.why}" finds nothing at ${exception.path.join('/')} of ${relativePath}: remove it`);
    parent[key] = exception.change(parent[key]!);
    // Properties added beside the one found, in the same object.
    Object.assign(parent, exception.extend ?? {});
  }
  return copy as unknown as SchemaFile;
}

const ajv = new Ajv({ allErrors: true, strict: false, validateFormats: false });
for (const [relativePath, file] of schemaFiles) ajv.addSchema(withExceptions(relativePath, file));

const validators = new Map<string, ValidateFunction>();
function validatorOf(ref: string): ValidateFunction {
  if (!validators.has(ref)) validators.set(ref, ajv.compile({ $ref: ref }));
  return validators.get(ref)!;
}

function problemsOf(ref: string, data: JsonObject): string[] {
  const validate = validatorOf(ref);
  if (validate(data)) return [];
  // A failed oneOf reports each branch; each line once.
  return [...new Set((validate.errors ?? []).map((error: ErrorObject) => `${error.instancePath || '/'} ${error.message ?? ''} ${JSON.stringify(error.params)}`))];
}

/** The provider definition of a resource type and apiVersion among the copied schemas. */
function definitionOf(type: string, apiVersion: string, scope: TemplateScope): string | undefined {
  const section = sectionOfScope[scope];
  for (const [, file] of schemaFiles) {
    const definitions = (file[section] ?? {}) as Record<string, { properties?: { type?: { enum?: string[] }; apiVersion?: { enum?: string[] } } }>;
    for (const [name, definition] of Object.entries(definitions)) {
      if (definition.properties?.type?.enum?.includes(type) && definition.properties.apiVersion?.enum?.includes(apiVersion)) return `${file.id}/${section}/${name}`;
    }
  }
  return undefined;
}

interface CheckedTemplate {
  path: string;
  template: Template;
  scope: TemplateScope;
}

/** The template and every nested template, with the scope each is deployed to. */
function templatesOf(template: Template, scope: TemplateScope, path = 'infra/main.json'): CheckedTemplate[] {
  return [
    { path, template, scope },
    ...resourcesOf(template).flatMap(([symbol, resource]) => {
      const nested = (resource.properties as JsonObject | undefined)?.template as Template | undefined;
      if (resource.type !== 'Microsoft.Resources/deployments' || !nested) return [];
      return templatesOf(nested, resource.resourceGroup ? 'resourceGroup' : 'subscription', `${path} resources[${symbol}] (${String(resource.name)})`);
    }),
  ];
}

describe('infra/main.json against the Resource Manager schemas', () => {
  const templates = templatesOf(mainTemplate(), 'subscription');

  it('is a subscription deployment template that nests templates at both scopes (the checks have something to check)', () => {
    expect(mainTemplate().$schema).toBe(subscriptionTemplateSchema);
    expect(new Set(templates.map(({ scope }) => scope))).toEqual(new Set(['subscription', 'resourceGroup']));
  });

  it.each(templates.map((checked) => [checked.path, checked] as const))('%s: declares the schema of its scope and is valid against it', (_, { template, scope }) => {
    const schema = scope === 'subscription' ? subscriptionTemplateSchema : resourceGroupTemplateSchema;
    expect(template.$schema).toBe(schema);
    expect(problemsOf(schema, template as unknown as JsonObject)).toEqual([]);
  });

  // An `existing` resource is only read (its properties are what it has): nothing of it goes to its provider.
  const resources = templates.flatMap(({ path, template, scope }) =>
    resourcesOf(template)
      .filter(([, resource]) => resource.existing !== true)
      .map(([, resource]) => [`${path}: ${String(resource.type)}@${String(resource.apiVersion)} ${String(resource.name)}`, resource, scope] as const),
  );

  it.each(resources)('%s: is valid against its provider definition', (_, resource, scope) => {
    const ref = definitionOf(String(resource.type), String(resource.apiVersion), scope);
    if (!ref) throw new Error(`No copied schema defines ${String(resource.type)} at apiVersion ${String(resource.apiVersion)} for a ${scope} template (test/fixtures/arm-schemas/README.md lists what they define)`);
    expect(problemsOf(ref, resource)).toEqual([]);
  });
});

describe("docs/deploy.md's parameters file", () => {
  it('is a valid parameters file of a subscription deployment, naming parameters of the template', () => {
    const block = readFileSync(join(repositoryRoot, 'docs', 'deploy.md'), 'utf8').match(/```json\n(\{\n  "\$schema"[\s\S]*?)\n```/)?.[1];
    const parameters = JSON.parse(block ?? '{}') as JsonObject;
    expect(parameters.$schema).toBe(`${schemaBase}/2018-05-01/subscriptionDeploymentParameters.json#`);
    expect(problemsOf(String(parameters.$schema), parameters)).toEqual([]);
    expect(Object.keys(parameters.parameters as JsonObject).filter((name) => !(name in (mainTemplate().parameters ?? {})))).toEqual([]);
  });
});
