/**
 * infra/main.json (compiled from infra/main.bicep by `bicep build`) as the tests read it: the
 * template, and what Resource Manager would make of it for given parameter values. `deploy`
 * evaluates the template's expressions (the functions it uses, not all of ARM's: an unknown
 * function fails the test that meets it), expands copy loops of resources and variables, applies
 * conditions, checks parameter values against their declared types and constraints as Resource
 * Manager does (user-defined types of `definitions` included), and descends into nested deployments
 * (Bicep's modules) with their own (inner) scope, in the order of their `dependsOn`, so that a
 * module's outputs reach those that read them. Both forms Bicep emits are read: resources as an
 * array, and (languageVersion 2.0, which user-defined types bring) as an object by symbolic name,
 * `existing` ones declared but not made. What only exists once deployed (`reference()` of a
 * resource) stays a `Deferred` naming what it reads.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const repositoryRoot = join(__dirname, '..', '..', '..');

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/** A parameter's declared type, or a user-defined type of `definitions`. */
export interface TemplateParameter {
  type?: string;
  $ref?: string;
  defaultValue?: Json;
  allowedValues?: Json[];
  minValue?: number;
  maxValue?: number;
  minLength?: number;
  maxLength?: number;
  nullable?: boolean;
  items?: TemplateParameter;
  properties?: Record<string, TemplateParameter>;
  additionalProperties?: boolean | TemplateParameter;
}

export interface Template {
  $schema: string;
  languageVersion?: string;
  definitions?: Record<string, TemplateParameter>;
  parameters?: Record<string, TemplateParameter>;
  variables?: JsonObject;
  /** An array, or (languageVersion 2.0) an object by symbolic name. */
  resources: JsonObject[] | Record<string, JsonObject>;
  outputs?: Record<string, { type: string; value: Json }>;
}

/** The template's resources with their symbolic names (an array's are named by their index). */
export const resourcesOf = (template: Template): [string, JsonObject][] =>
  Array.isArray(template.resources) ? template.resources.map((resource, index) => [String(index), resource]) : Object.entries(template.resources);

export function readJson<T>(relativePath: string): T {
  return JSON.parse(readFileSync(join(repositoryRoot, relativePath), 'utf8')) as T;
}

export const mainTemplate = (): Template => readJson<Template>('infra/main.json');

/** A value known only once deployed: what it reads, e.g. `reference(<id>).clientId`. */
export class Deferred {
  constructor(readonly text: string) {}
  toString(): string {
    return `{${this.text}}`;
  }
}

class Lambda {
  constructor(readonly names: string[], readonly body: Node, readonly context: Context) {}
}

type Value = Json | Deferred | Lambda | undefined;

type Node =
  | { kind: 'literal'; value: string | number }
  | { kind: 'call'; name: string; args: Node[] }
  | { kind: 'member'; target: Node; property: string }
  | { kind: 'index'; target: Node; index: Node };

function tokenize(text: string): string[] {
  const tokens: string[] = [];
  let at = 0;
  while (at < text.length) {
    const rest = text.slice(at);
    const match = /^\s+/.exec(rest) ?? /^'(?:[^']|'')*'/.exec(rest) ?? /^-?\d+/.exec(rest) ?? /^[A-Za-z_][A-Za-z0-9_]*/.exec(rest) ?? /^[().,[\]]/.exec(rest);
    if (!match) throw new Error(`Cannot read the expression at "${rest}"`);
    if (match[0].trim()) tokens.push(match[0]);
    at += match[0].length;
  }
  return tokens;
}

/** Parses the text of an expression (without its brackets). */
function parse(text: string): Node {
  const tokens = tokenize(text);
  let at = 0;
  const expect = (token: string) => {
    if (tokens[at] !== token) throw new Error(`Expected "${token}" in [${text}] at token ${at}, found "${tokens[at]}"`);
    at += 1;
  };
  const expression = (): Node => {
    const token = tokens[at++];
    if (token === undefined) throw new Error(`Unexpected end of [${text}]`);
    let node: Node;
    if (token.startsWith("'")) node = { kind: 'literal', value: token.slice(1, -1).replace(/''/g, "'") };
    else if (/^-?\d/.test(token)) node = { kind: 'literal', value: Number(token) };
    else {
      expect('(');
      const args: Node[] = [];
      while (tokens[at] !== ')') {
        args.push(expression());
        if (tokens[at] === ',') at += 1;
      }
      expect(')');
      node = { kind: 'call', name: token.toLowerCase(), args };
    }
    for (;;) {
      if (tokens[at] === '.') {
        node = { kind: 'member', target: node, property: tokens[at + 1]! };
        at += 2;
      } else if (tokens[at] === '[') {
        at += 1;
        node = { kind: 'index', target: node, index: expression() };
        expect(']');
      } else return node;
    }
  };
  const node = expression();
  if (at !== tokens.length) throw new Error(`Unexpected "${tokens[at]}" in [${text}]`);
  return node;
}

/** Where a template is deployed, and what it is deployed with. */
interface Scope {
  subscriptionId: string;
  resourceGroup?: string;
  location: string;
}

/** A resource of the template being deployed, by its symbolic name: its id, and a module's outputs once it is deployed. */
interface Known {
  id: string;
  outputs?: JsonObject;
}

interface Context {
  template: Template;
  parameters: JsonObject;
  scope: Scope;
  deploymentName: string;
  /** The index of the resource copy loop being expanded. */
  copyIndex?: number;
  /** The index of each variable copy loop being expanded, by its name. */
  variableLoops: Map<string, number>;
  lambdaVariables: Map<string, Value>;
  variableValues: Map<string, Value>;
  symbols: Map<string, Known>;
}

export const isExpression = (text: string): boolean => text.startsWith('[') && !text.startsWith('[[') && text.endsWith(']');

const asText = (value: Value): string => (value instanceof Deferred ? value.toString() : typeof value === 'string' ? value : JSON.stringify(value));

function asArray(value: Value): Value[] {
  if (!Array.isArray(value)) throw new Error(`Expected an array, found ${asText(value)}`);
  return value;
}

function asObject(value: Value): JsonObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || value instanceof Deferred || value instanceof Lambda) throw new Error(`Expected an object, found ${asText(value)}`);
  return value;
}

function isEmpty(value: Value): boolean {
  if (value === null || value === undefined || value === '') return true;
  if (Array.isArray(value)) return value.length === 0;
  if (typeof value === 'object' && !(value instanceof Deferred) && !(value instanceof Lambda)) return Object.keys(value).length === 0;
  return false;
}

function resourceIdOf(scope: Scope, args: Value[]): string {
  const texts = args.map(asText);
  const typeAt = texts.findIndex((text) => /^[A-Za-z]+\.[A-Za-z.]+\/[A-Za-z]/.test(text));
  const [subscriptionId, resourceGroup] = typeAt === 2 ? texts : typeAt === 1 ? [scope.subscriptionId, texts[0]] : [scope.subscriptionId, scope.resourceGroup];
  const [namespace, ...types] = texts[typeAt]!.split('/');
  const segments = types.flatMap((type, index) => [type, texts[typeAt + 1 + index]!]);
  const parent = resourceGroup === undefined ? `/subscriptions/${subscriptionId}` : `/subscriptions/${subscriptionId}/resourceGroups/${resourceGroup}`;
  return `${parent}/providers/${namespace}/${segments.join('/')}`;
}

const callValue = (lambda: Value, ...values: Value[]): Value => {
  if (!(lambda instanceof Lambda)) throw new Error('Expected a lambda');
  const lambdaVariables = new Map(lambda.context.lambdaVariables);
  lambda.names.forEach((name, index) => lambdaVariables.set(name, values[index]));
  return evaluateNode(lambda.body, { ...lambda.context, lambdaVariables });
};

/** `reference()` of a symbolic name or an id: a deployed module's outputs, or what a resource holds once deployed. */
function referenceOf(target: string, context: Context): Value {
  const known = context.symbols.get(target) ?? [...context.symbols.values()].find(({ id }) => id === target);
  if (known?.outputs) return { outputs: Object.fromEntries(Object.entries(known.outputs).map(([name, value]) => [name, { value }])) };
  return new Deferred(`reference(${known?.id ?? target})`);
}

type TemplateFunction = (args: Value[], context: Context) => Value;

const functions: Record<string, TemplateFunction> = {
  parameters: ([name], context) => parameterValue(context, asText(name)),
  variables: ([name], context) => variableValue(context, asText(name)),
  copyindex: ([first, second], context) => {
    // copyIndex(), copyIndex(offset), copyIndex('loop') or copyIndex('loop', offset).
    const loop = typeof first === 'string' ? first : undefined;
    const offset = (typeof first === 'number' ? first : typeof second === 'number' ? second : 0) as number;
    const index = loop === undefined ? context.copyIndex : context.variableLoops.get(loop);
    if (index === undefined) throw new Error(`copyIndex(${loop ?? ''}) outside its copy loop`);
    return index + offset;
  },
  lambdavariables: ([name], context) => context.lambdaVariables.get(asText(name)),
  concat: (args) => (args.some(Array.isArray) ? args.flatMap((arg) => asArray(arg)) : args.map(asText).join('')) as Json,
  format: ([format, ...args]) => asText(format).replace(/\{(\d+)\}/g, (_, index: string) => asText(args[Number(index)])),
  tolower: ([text]) => asText(text).toLowerCase(),
  split: ([text, separator]) => asText(text).split(asText(separator)),
  endswith: ([text, end]) => asText(text).toLowerCase().endsWith(asText(end).toLowerCase()),
  take: ([value, count]) => (Array.isArray(value) ? value.slice(0, count as number) : asText(value).slice(0, count as number)) as Json,
  length: ([value]) => (Array.isArray(value) ? value.length : typeof value === 'string' ? value.length : Object.keys(asObject(value)).length),
  empty: ([value]) => isEmpty(value),
  not: ([value]) => !value,
  and: (args) => args.every(Boolean),
  or: (args) => args.some(Boolean),
  equals: ([left, right]) => JSON.stringify(left) === JSON.stringify(right),
  add: ([left, right]) => (left as number) + (right as number),
  sub: ([left, right]) => (left as number) - (right as number),
  true: () => true,
  false: () => false,
  null: () => null,
  contains: ([container, item]) => (Array.isArray(container) ? container.includes(item as Json) : typeof container === 'string' ? container.includes(asText(item)) : asText(item) in asObject(container)),
  createarray: (args) => args as Json[],
  createobject: (args) => Object.fromEntries(Array.from({ length: args.length / 2 }, (_, index) => [asText(args[2 * index]), args[2 * index + 1] as Json])),
  union: (args) => (args.every(Array.isArray) ? [...new Set(args.flatMap((arg) => asArray(arg)))] : Object.assign({}, ...args.map(asObject))) as Json,
  items: ([object]) => Object.entries(asObject(object)).sort(([left], [right]) => left.localeCompare(right)).map(([key, value]) => ({ key, value })),
  map: ([array, lambda]) => asArray(array).map((item) => callValue(lambda, item)) as Json[],
  filter: ([array, lambda]) => asArray(array).filter((item) => callValue(lambda, item)) as Json[],
  uniquestring: (args) => createHash('sha256').update(args.map(asText).join('|')).digest('hex').slice(0, 13),
  guid: (args) => createHash('sha256').update(args.map(asText).join('|')).digest('hex').slice(0, 32).replace(/^(.{8})(.{4})(.{4})(.{4})/, '$1-$2-$3-$4-'),
  resourceid: (args, context) => resourceIdOf(context.scope, args),
  subscriptionresourceid: ([type, ...names], context) => `/subscriptions/${context.scope.subscriptionId}/providers/${asText(type)}/${names.map(asText).join('/')}`,
  subscription: (_, context) => ({ id: `/subscriptions/${context.scope.subscriptionId}`, subscriptionId: context.scope.subscriptionId, tenantId: 'tenant-id' }),
  tenant: () => ({ tenantId: 'tenant-id' }),
  resourcegroup: (_, context) => ({ id: `/subscriptions/${context.scope.subscriptionId}/resourceGroups/${context.scope.resourceGroup}`, name: context.scope.resourceGroup ?? null, location: context.scope.location }),
  deployment: (_, context) => ({ name: context.deploymentName, location: context.scope.location }),
  environment: () => ({ name: 'AzureCloud', resourceManager: 'https://management.azure.com/', suffixes: { keyvaultDns: '.vault.azure.net', storage: 'core.windows.net' } }),
  reference: ([target], context) => referenceOf(asText(target), context),
  // What Resource Manager does with it: the deployment fails with this message, before anything is made.
  fail: ([message]) => {
    throw new Error(`The deployment fails: ${asText(message)}`);
  },
};

function evaluateNode(node: Node, context: Context): Value {
  switch (node.kind) {
    case 'literal':
      return node.value;
    case 'member': {
      const target = evaluateNode(node.target, context);
      return target instanceof Deferred ? new Deferred(`${target.text}.${node.property}`) : asObject(target)[node.property];
    }
    case 'index': {
      const target = evaluateNode(node.target, context);
      const index = evaluateNode(node.index, context);
      if (target instanceof Deferred) return new Deferred(`${target.text}[${asText(index)}]`);
      if (Array.isArray(target)) {
        if (typeof index !== 'number' || index >= target.length) throw new Error(`Index ${asText(index)} is out of the array's bounds`);
        return target[index];
      }
      const object = asObject(target);
      const key = Object.keys(object).find((name) => name.toLowerCase() === asText(index).toLowerCase());
      if (key === undefined) throw new Error(`The object has no property "${asText(index)}"`);
      return object[key];
    }
    case 'call': {
      // Both are lazy: `if` evaluates only the branch it takes, `lambda` its body when called.
      if (node.name === 'if') return evaluateNode(evaluateNode(node.args[0]!, context) ? node.args[1]! : node.args[2]!, context);
      if (node.name === 'lambda') return new Lambda(node.args.slice(0, -1).map((arg) => asText(evaluateNode(arg, context))), node.args.at(-1)!, context);
      const implementation = functions[node.name];
      if (!implementation) throw new Error(`The tests' evaluator does not know the template function ${node.name}()`);
      return implementation(node.args.map((arg) => evaluateNode(arg, context)), context);
    }
  }
}

/** A JSON value of the template with its expressions evaluated (`[[` escapes a bracket). */
function evaluate(value: Json, context: Context): Value {
  if (typeof value === 'string') return isExpression(value) ? evaluateNode(parse(value.slice(1, -1)), context) : value.replace(/^\[\[/, '[');
  if (Array.isArray(value)) return value.map((item) => evaluate(item, context) as Json);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, item]) => [asText(evaluate(key, context)), evaluate(item, context) as Json]));
  return value;
}

function parameterValue(context: Context, name: string): Value {
  if (name in context.parameters) return context.parameters[name];
  const declared = context.template.parameters?.[name];
  if (declared?.defaultValue === undefined) throw new Error(`The template's parameter ${name} has no value`);
  return evaluate(declared.defaultValue, context);
}

function variableValue(context: Context, name: string): Value {
  if (!context.variableValues.has(name)) {
    const outside = { ...context, copyIndex: undefined, lambdaVariables: new Map<string, Value>() };
    const loop = (context.template.variables?.copy as JsonObject[] | undefined)?.find((candidate) => candidate.name === name);
    const raw = context.template.variables?.[name];
    if (loop) {
      const count = evaluate(loop.count!, outside) as number;
      const items = Array.from({ length: count }, (_, index) => evaluate(loop.input!, { ...outside, variableLoops: new Map([...context.variableLoops, [name, index]]) }));
      context.variableValues.set(name, items as Json[]);
    } else if (raw === undefined || name === 'copy') throw new Error(`The template has no variable ${name}`);
    else context.variableValues.set(name, evaluate(raw, outside));
  }
  return context.variableValues.get(name);
}

/** Resource Manager's own check of a value against its declared type (a user-defined type's too): the first problem, naming where it is. */
function problemOf(value: Value, declared: TemplateParameter, where: string, template: Template): string | undefined {
  if (value instanceof Deferred) return undefined;
  if (declared.$ref) {
    const type = template.definitions?.[declared.$ref.replace('#/definitions/', '')];
    if (!type) throw new Error(`${where} refers to ${declared.$ref}, which the template does not define`);
    return problemOf(value, { ...type, ...declared, $ref: undefined }, where, template);
  }
  if (value === null && declared.nullable) return undefined;
  const type = declared.type?.toLowerCase();
  if (declared.allowedValues && !declared.allowedValues.some((allowed) => JSON.stringify(allowed) === JSON.stringify(value)))
    return `${where} is not one of the allowed values (${declared.allowedValues.map((allowed) => JSON.stringify(allowed)).join(', ')}): ${asText(value)}`;
  if (type === 'int' && !Number.isInteger(value)) return `${where} is not an int: ${asText(value)}`;
  if (type === 'bool' && typeof value !== 'boolean') return `${where} is not a bool: ${asText(value)}`;
  if ((type === 'string' || type === 'securestring') && typeof value !== 'string') return `${where} is not a string: ${asText(value)}`;
  if (typeof value === 'number' && declared.minValue !== undefined && value < declared.minValue) return `${where} is below ${declared.minValue}: ${value}`;
  if (typeof value === 'number' && declared.maxValue !== undefined && value > declared.maxValue) return `${where} is above ${declared.maxValue}: ${value}`;
  const length = typeof value === 'string' || Array.isArray(value) ? value.length : undefined;
  if (length !== undefined && declared.minLength !== undefined && length < declared.minLength) return `${where} is shorter than ${declared.minLength}`;
  if (length !== undefined && declared.maxLength !== undefined && length > declared.maxLength) return `${where} is longer than ${declared.maxLength}`;
  if (type === 'array') {
    if (!Array.isArray(value)) return `${where} is not an array: ${asText(value)}`;
    const items = declared.items;
    return items ? value.map((item, index) => problemOf(item, items, `${where}[${index}]`, template)).find(Boolean) : undefined;
  }
  if (type === 'object' || type === 'secureobject') {
    const object = typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Lambda) ? value : undefined;
    if (!object) return `${where} is not an object: ${asText(value)}`;
    const properties = declared.properties ?? {};
    const missing = Object.keys(properties).find((name) => !(name in object) && !properties[name]!.nullable);
    if (missing) return `${where} has no ${missing}, which it requires`;
    const extra = declared.additionalProperties === false ? Object.keys(object).find((name) => !(name in properties)) : undefined;
    if (extra) return `${where} has the property ${extra}, which its type does not allow (it allows ${Object.keys(properties).join(', ')})`;
    return Object.entries(properties)
      .filter(([name]) => name in object)
      .map(([name, property]) => problemOf(object[name], property, `${where}.${name}`, template))
      .find(Boolean);
  }
  return undefined;
}

function checkParameters(template: Template, context: Context): void {
  for (const [name, declared] of Object.entries(template.parameters ?? {})) {
    const problem = problemOf(parameterValue(context, name), declared, name, template);
    if (problem) throw new Error(`The value of parameter ${problem}`);
  }
}

/** One resource as Resource Manager would create it. */
export interface DeployedResource {
  type: string;
  apiVersion: string;
  name: string;
  /** The resource's id (for an extension resource, the id it is created at, followed by its own type and name). */
  id: string;
  /** Subscription or resource group the resource's template is deployed to. */
  deploymentScope: string;
  resource: JsonObject;
}

export interface Deployment {
  resources: DeployedResource[];
  /** Every template deployed, the outer one first, with its deployment's name, the parameters it was given and its outputs. */
  templates: { name: string; parameters: JsonObject; outputs: JsonObject }[];
}

const scopeId = (scope: Scope): string => (scope.resourceGroup ? `/subscriptions/${scope.subscriptionId}/resourceGroups/${scope.resourceGroup}` : `/subscriptions/${scope.subscriptionId}`);

export const testScope: Scope = { subscriptionId: '00000000-0000-0000-0000-000000000001', location: 'westus3' };

/** The resources in an order that puts each after those its `dependsOn` names by symbolic name. */
function inDependencyOrder(resources: [string, JsonObject][]): [string, JsonObject][] {
  const bySymbol = new Map(resources);
  const ordered: [string, JsonObject][] = [];
  const visit = (symbol: string, path: string[]) => {
    if (ordered.some(([done]) => done === symbol)) return;
    if (path.includes(symbol)) throw new Error(`dependsOn makes a cycle: ${[...path, symbol].join(' -> ')}`);
    const resource = bySymbol.get(symbol)!;
    for (const dependency of (resource.dependsOn as string[] | undefined) ?? []) if (bySymbol.has(dependency)) visit(dependency, [...path, symbol]);
    ordered.push([symbol, resource]);
  };
  for (const [symbol] of resources) visit(symbol, []);
  return ordered;
}

/** The id a resource of a template gets, from its evaluated type, name and scope. */
function idOf(parent: string, type: string, name: string): string {
  // A resource group's id has no provider in it.
  if (type.toLowerCase() === 'microsoft.resources/resourcegroups') return `${parent}/resourceGroups/${name}`;
  const typeSegments = type.split('/');
  const nameSegments = name.split('/');
  return `${parent}/providers/${typeSegments[0]}/${typeSegments.slice(1).flatMap((segment, at) => [segment, nameSegments[at]!]).join('/')}`;
}

/**
 * Deploys a template in memory. A nested deployment's template is deployed with the parameters it
 * is given (its own expressions evaluated in its own scope), at the subscription and resource group
 * the deployment names; its outputs are then what `reference()` of it reads.
 */
export function deploy(template: Template, parameters: JsonObject, scope: Scope = testScope, deployment: Deployment = { resources: [], templates: [] }, name = 'main'): Deployment {
  const context: Context = { template, parameters, scope, deploymentName: name, variableLoops: new Map(), lambdaVariables: new Map(), variableValues: new Map(), symbols: new Map() };
  checkParameters(template, context);
  const outputs: JsonObject = {};
  deployment.templates.push({ name, parameters, outputs });
  const deploymentScope = scopeId(scope);
  for (const [symbol, raw] of inDependencyOrder(resourcesOf(template))) {
    const copy = raw.copy as JsonObject | undefined;
    const count = copy ? (evaluate(copy.count!, context) as number) : 1;
    for (let index = 0; index < count; index += 1) {
      const instance: Context = { ...context, copyIndex: copy ? index : undefined };
      if (raw.condition !== undefined && !evaluate(raw.condition, instance)) continue;
      const { properties, ...rest } = raw;
      const nested = raw.type === 'Microsoft.Resources/deployments' && (properties as JsonObject).expressionEvaluationOptions;
      const { template: nestedTemplate, ...otherProperties } = (properties ?? {}) as JsonObject;
      // An inner-scope nested template is evaluated by its own deployment, not by this one.
      const evaluatedProperties = nested ? { ...(evaluate(otherProperties, instance) as JsonObject), template: nestedTemplate! } : properties && evaluate(properties, instance);
      const resource: JsonObject = { ...(evaluate(rest, instance) as JsonObject), ...(evaluatedProperties === undefined ? {} : { properties: evaluatedProperties as Json }) };
      const type = resource.type as string;
      const resourceName = resource.name as string;
      const target = { subscriptionId: (resource.subscriptionId as string | undefined) ?? scope.subscriptionId, resourceGroup: (resource.resourceGroup as string | undefined) ?? (resource.subscriptionId ? undefined : scope.resourceGroup), location: scope.location };
      const targetScope = nested ? scopeId(target) : deploymentScope;
      // An extension resource's scope: a resource id, or (older templates) a type and name below the deployment's scope.
      const parent = !resource.scope ? targetScope : String(resource.scope).startsWith('/') ? String(resource.scope) : `${targetScope}/providers/${resource.scope as string}`;
      const id = idOf(parent, type, resourceName);
      const known: Known = { id };
      if (!copy) context.symbols.set(symbol, known);
      // An existing resource is read, not made.
      if (resource.existing === true) continue;
      deployment.resources.push({ type, apiVersion: resource.apiVersion as string, name: resourceName, id, deploymentScope, resource });
      if (nested) {
        const given = asObject((resource.properties as JsonObject).parameters ?? {});
        const values = Object.fromEntries(Object.entries(given).map(([key, value]) => [key, asObject(value).value!]));
        const nestedDeployment = deploy(nestedTemplate as unknown as Template, values, target, deployment, resourceName);
        known.outputs = nestedDeployment.templates.find((deployed) => deployed.name === resourceName && deployed.parameters === values)!.outputs;
      }
    }
  }
  for (const [outputName, output] of Object.entries(template.outputs ?? {})) outputs[outputName] = evaluate(output.value, context) as Json;
  return deployment;
}

/** Every string in a JSON value, with where it is. */
export function* strings(value: Json | undefined, path = ''): Generator<{ path: string; text: string }> {
  if (typeof value === 'string') yield { path, text: value };
  else if (Array.isArray(value)) for (const [index, item] of value.entries()) yield* strings(item, `${path}[${index}]`);
  else if (value && typeof value === 'object') for (const [key, item] of Object.entries(value)) yield* strings(item, `${path}.${key}`);
}

/** The five secrets: a securestring parameter each, the Key Vault secret it becomes, and the app setting that refers to it. */
export const secrets = [
  { parameter: 'notifySigningSecret', setting: 'NOTIFY_SIGNING_SECRET', secretName: 'notify-signing-secret' },
  { parameter: 'lifecyclePassword', setting: 'LIFECYCLE_PASSWORD', secretName: 'lifecycle-password' },
  { parameter: 'slackSigningSecret', setting: 'SLACK_SIGNING_SECRET', secretName: 'slack-signing-secret' },
  { parameter: 'teamsWebhookSecret', setting: 'TEAMS_WEBHOOK_SECRET', secretName: 'teams-webhook-secret' },
  { parameter: 'slackApprovalWebhookUrl', setting: 'SLACK_APPROVAL_WEBHOOK_URL', secretName: 'slack-approval-webhook-url' },
];

/** The parameters infra/main.json has no default for: the azd environment's, and the secrets (empty: none). */
export const requiredParameters: JsonObject = { environmentName: 'gateway-test', location: testScope.location, ...Object.fromEntries(secrets.map(({ parameter }) => [parameter, ''])) };

/** The app settings of the deployed function app, by name (each name once). */
export function appSettingsOf(deployment: Deployment): Map<string, string> {
  const sites = deployment.resources.filter(({ type }) => type === 'Microsoft.Web/sites');
  if (sites.length !== 1) throw new Error(`Expected one function app, found ${sites.length}`);
  const settings = ((sites[0]!.resource.properties as JsonObject).siteConfig as JsonObject).appSettings as { name: string; value: unknown }[];
  const names = settings.map(({ name }) => name);
  if (new Set(names).size !== names.length) throw new Error(`An app setting is set twice: ${names.join(', ')}`);
  return new Map(settings.map(({ name, value }) => [name, String(value)]));
}
