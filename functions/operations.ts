/**
 * The route entries of the documented operations: one function per operation on its documented
 * path, and one for the `{scope}` operations together. Glue only: the pipeline is
 * src/calls/operationCall.ts, its HTTP adapter src/http/operationRoute.ts.
 */
import { getServices } from '../src/app';
import { operationHandler, scopeDispatcher, scopeRouteMethods, scopeRouteTemplate, type OperationHandler } from '../src/http';
import { getConfig } from '../src/settings';
import { operations, resolvePathTemplate } from '../src/spec';
import type { RouteEntry } from './routeEntry';

const providerNamespace = getConfig().PROVIDER_NAMESPACE;

if (!getConfig().ACCESS_POLICY) {
  // eslint-disable-next-line no-console
  console.log('ACCESS_POLICY is not set: every caller with a function key may call every operation (within ALLOWED_SCOPES) and see every orchestration.');
}

/** Each operation's handler, by its function name. */
export const operationHandlers: Record<string, OperationHandler> = Object.fromEntries(
  operations.map((operation) => [operation.name, operationHandler(operation, getServices)]),
);

const scopeOperations = operations.filter((operation) => operation.pathTemplate.startsWith('{scope}/'));

/**
 * `{scope}` holds slashes, and the host allows a catch-all only as the last segment, so the
 * scope operations share one function on a constrained catch-all that picks the operation by
 * method and suffix.
 */
export const scopeHandler = scopeDispatcher(
  scopeOperations.map((operation) => ({ operation, handler: operationHandlers[operation.name]! })),
  providerNamespace,
);

export const operationRoutes: RouteEntry[] = [
  ...operations
    .filter((operation) => !scopeOperations.includes(operation))
    .map((operation) => ({
      name: operation.name,
      methods: [operation.method],
      route: resolvePathTemplate(operation, providerNamespace),
      authLevel: 'function' as const,
      handler: operationHandlers[operation.name]!,
    })),
  {
    name: 'scopeOperations',
    methods: scopeRouteMethods(scopeOperations),
    route: scopeRouteTemplate(scopeOperations, providerNamespace),
    authLevel: 'function',
    handler: scopeHandler,
  },
];
