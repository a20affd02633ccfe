/**
 * Registers every documented operation as an HTTP function on its documented path.
 * Registration only: the work is in src/http.
 */
import { app } from '@azure/functions';
import { getConfig } from '../src/settings/config';
import { createOperationHandler, type OperationHandler } from '../src/calls/operationCall';
import { getServices } from '../src/services';
import { operations, resolvePathTemplate } from '../src/spec/catalogue';
import { createScopeDispatcher, scopeRouteTemplate } from '../src/http/scopeRoute';

const providerNamespace = getConfig().PROVIDER_NAMESPACE;

if (!getConfig().ACCESS_POLICY) {
  // eslint-disable-next-line no-console
  console.log('ACCESS_POLICY is not set: every caller with a function key may call every operation (within ALLOWED_SCOPES) and see every orchestration.');
}

export const operationHandlers: Record<string, OperationHandler> = Object.fromEntries(
  operations.map((operation) => [operation.name, createOperationHandler(operation, getServices)]),
);

const scopeOperations = operations.filter((operation) => operation.pathTemplate.startsWith('{scope}/'));

for (const operation of operations) {
  if (scopeOperations.includes(operation)) continue;
  app.http(operation.name, {
    methods: [operation.method],
    route: resolvePathTemplate(operation, providerNamespace),
    authLevel: 'function',
    handler: operationHandlers[operation.name]!,
  });
}

/**
 * `{scope}` holds slashes, and the host allows a catch-all only as the last segment, so the
 * scope operations share one function on a constrained catch-all that dispatches on the suffix.
 */
export const scopeHandler = createScopeDispatcher(scopeOperations, providerNamespace, operationHandlers);

app.http('scopeOperations', {
  methods: ['GET'],
  route: scopeRouteTemplate(scopeOperations, providerNamespace),
  authLevel: 'function',
  handler: scopeHandler,
});
