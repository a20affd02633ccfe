/**
 * The OpenAPI 3.1 document of every route the app has, generated from the operation catalogue
 * and the app-route table with zod's JSON Schema output (JSON Schema 2020-12, the dialect of
 * OpenAPI 3.1). Nothing in it is written by hand.
 */
import { z } from 'zod';
import { appRoutes, type AppRoute } from '../routes';
import { renderErrorBody, GatewayError } from '../errors';
import { operations, resolvePathTemplate, type OperationSpec } from '../spec';

type JsonSchema = Record<string, unknown>;

/**
 * Recursive schemas come out of zod with local `$defs`; inside the document `#` is the
 * document's root, so each definition moves to `components.schemas` (the same one once) and
 * its references follow it.
 */
class SchemaRegistry {
  readonly components: Record<string, JsonSchema> = {};
  readonly #namesByText = new Map<string, string>();
  #nextNumber = 0;

  schemaOf(schema: z.ZodType): JsonSchema {
    const {
      $schema: _dialect,
      $defs,
      ...rest
    } = z.toJSONSchema(schema, { unrepresentable: 'any', io: 'input' }) as JsonSchema & { $defs?: Record<string, JsonSchema> };
    const renames = new Map<string, string>();
    for (const name of Object.keys($defs ?? {})) renames.set(`#/$defs/${name}`, `#/components/schemas/Recursive${this.#nextNumber++}`);
    const rewrite = (value: unknown): unknown => {
      if (Array.isArray(value)) return value.map(rewrite);
      if (!value || typeof value !== 'object') return value;
      return Object.fromEntries(
        Object.entries(value).map(([key, item]) => [key, key === '$ref' && typeof item === 'string' ? (renames.get(item) ?? item) : rewrite(item)]),
      );
    };
    for (const [name, definition] of Object.entries($defs ?? {})) {
      const text = JSON.stringify(rewrite(definition));
      const known = this.#namesByText.get(text);
      const target = renames.get(`#/$defs/${name}`)!;
      if (known) renames.set(`#/$defs/${name}`, `#/components/schemas/${known}`);
      else {
        const componentName = target.split('/').pop()!;
        this.#namesByText.set(text, componentName);
        this.components[componentName] = JSON.parse(text) as JsonSchema;
      }
    }
    return rewrite(rest) as JsonSchema;
  }
}

const errorSchema: JsonSchema = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: { type: 'string' },
        message: { type: 'string' },
        target: { type: 'string' },
        details: {
          type: 'array',
          items: { type: 'object', properties: { code: { type: 'string' }, message: { type: 'string' }, target: { type: 'string' } } },
        },
      },
    },
  },
  examples: [
    renderErrorBody(
      new GatewayError('InvalidRequest', 'The request has 1 problem.', {
        details: [{ code: 'InvalidParameter', target: 'api-version', message: 'api-version is required' }],
      }),
    ),
  ],
};

const appErrors = {
  '400': { description: 'Bad input: one details entry per problem', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
  '401': { description: 'No valid function key, or no bearer token in passthrough mode' },
  '403': {
    description: "OperationNotAllowed (ACCESS_POLICY), or ScopeNotAllowed (ALLOWED_SCOPES or the caller's scopes)",
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
  },
  '429': {
    description:
      "CallerRateLimited: the caller's share of upstream calls is used (ACCESS_POLICY); TooManyWaits: the caller or the instance holds as many gateway-wait answers as it may. Retry-After says when. An upstream's own 429 is passed back as it came",
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
  },
  '502': { description: 'The upstream answered with something unusable', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
  '504': { description: 'The upstream did not answer in time', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
};

function parameters(registry: SchemaRegistry, location: 'path' | 'query', shape: Record<string, z.ZodType> | undefined): JsonSchema[] {
  return Object.entries(shape ?? {}).map(([name, schema]) => ({
    name,
    in: location,
    required: location === 'path' || !schema.safeParse(undefined).success,
    schema: registry.schemaOf(schema),
  }));
}

function jsonContent(registry: SchemaRegistry, schema: z.ZodType | null | undefined) {
  return schema ? { content: { 'application/json': { schema: registry.schemaOf(schema) } } } : {};
}

function operationEntry(registry: SchemaRegistry, operation: OperationSpec): [string, string, JsonSchema] {
  const queryShape = operation.query.shape as Record<string, z.ZodType>;
  const pageParameter = operation.pageable
    ? [
        {
          name: 'gateway-pages',
          in: 'query',
          required: false,
          description: 'The app\'s own: "all" or a number of pages to merge into one value array.',
          schema: { type: 'string' },
        },
      ]
    : [];
  const responses: Record<string, JsonSchema> = {};
  for (const [status, schema] of Object.entries(operation.responses))
    responses[status] = { description: `${status} from the upstream`, ...jsonContent(registry, schema) };
  return [
    `/${resolvePathTemplate(operation, '{P}')}`,
    operation.method.toLowerCase(),
    {
      operationId: operation.operationId,
      summary: operation.summary,
      description: `${operation.source}; documented api-version ${operation.apiVersion}. The upstream's answer is passed back as it came.`,
      tags: [operation.upstream],
      parameters: [
        ...parameters(registry, 'path', operation.pathParams.shape as Record<string, z.ZodType>),
        ...parameters(registry, 'query', queryShape),
        ...pageParameter,
      ],
      ...(operation.body ? { requestBody: { required: operation.body.required, ...jsonContent(registry, operation.body.schema) } } : {}),
      responses: {
        ...responses,
        ...appErrors,
        default: { description: 'An upstream error, passed back as it came', ...jsonContent(registry, operation.errorSchema) },
      },
    },
  ];
}

function appRouteEntry(registry: SchemaRegistry, route: AppRoute): [string, string, JsonSchema] {
  const responses: Record<string, JsonSchema> = {};
  for (const [status, response] of Object.entries(route.responses))
    responses[status] = { description: response.description, ...jsonContent(registry, response.schema) };
  return [
    `/${route.route}`,
    route.method.toLowerCase(),
    {
      operationId: route.name,
      summary: route.summary,
      tags: [route.tag],
      parameters: [
        ...parameters(registry, 'path', route.params?.shape as Record<string, z.ZodType>),
        ...parameters(registry, 'query', route.query?.shape as Record<string, z.ZodType>),
      ],
      ...(route.body ? { requestBody: { required: true, ...jsonContent(registry, route.body) } } : {}),
      responses: {
        ...responses,
        '400': appErrors['400'],
        ...(route.authLevel === 'anonymous' ? {} : { '403': { description: 'OperationNotAllowed (ACCESS_POLICY)', content: appErrors['400'].content } }),
        '404': { description: 'No such resource (or an orchestration the caller may not see)', content: appErrors['400'].content },
      },
      ...(route.authLevel === 'anonymous' ? { security: [] } : {}),
    },
  ];
}

export function buildOpenApiDocument(options: { providerNamespace: string; version: string }) {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  const registry = new SchemaRegistry();
  const entries = [
    ...operations.map((operation) => operationEntry(registry, operation)),
    ...Object.values(appRoutes).map((route) => appRouteEntry(registry, route)),
  ];
  for (const [path, method, operation] of entries) {
    const resolved = path.replaceAll('{P}', options.providerNamespace);
    paths[resolved] = { ...paths[resolved], [method]: operation };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Management gateway',
      version: options.version,
      description: "Every documented management operation at its documented path, plus the app's orchestration, certificate and template routes.",
    },
    servers: [{ url: '/api' }],
    security: [{ functionKeyHeader: [] }, { functionKeyQuery: [] }],
    paths,
    components: {
      schemas: { Error: errorSchema, ...registry.components },
      securitySchemes: {
        functionKeyHeader: { type: 'apiKey', in: 'header', name: 'x-functions-key' },
        functionKeyQuery: { type: 'apiKey', in: 'query', name: 'code' },
      },
    },
  };
}
