/**
 * The catch-all route shared by the `{scope}` operations. Its regex constraint matches only
 * their documented suffixes, so it cannot shadow another route (the real host tries
 * overlapping routes in function-name order, azure-functions-host#9876).
 */
import { GatewayError } from '../errors';
import { resolvePathTemplate, type OperationSpec } from '../spec/catalogue';
import type { OperationHandler } from '../calls/operationCall';
import { errorResponse } from '../calls/answers';
import { correlationIdOf } from './correlation';

export const scopeRouteParameter = 'scopePath';

function suffixOf(operation: OperationSpec, providerNamespace: string): string {
  return resolvePathTemplate(operation, providerNamespace).slice('{scope}/'.length);
}

const escapeRegex = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * `{*scopePath:regex(^.+/(suffix1|suffix2)$)}`. The expression avoids `?`, `{`, `}`, `[` and `]`,
 * which ASP.NET route templates give meanings of their own.
 */
export function scopeRouteTemplate(scopeOperations: readonly OperationSpec[], providerNamespace: string): string {
  const suffixes = scopeOperations.map((operation) => escapeRegex(suffixOf(operation, providerNamespace))).join('|');
  return `{*${scopeRouteParameter}:regex(^.+/(${suffixes})$)}`;
}

export function createScopeDispatcher(
  scopeOperations: readonly OperationSpec[],
  providerNamespace: string,
  handlers: Record<string, OperationHandler>,
): OperationHandler {
  return async (request, context) => {
    const path = request.params[scopeRouteParameter] ?? '';
    for (const operation of scopeOperations) {
      const suffix = `/${suffixOf(operation, providerNamespace)}`;
      if (path.toLowerCase().endsWith(suffix.toLowerCase())) {
        const scope = path.slice(0, path.length - suffix.length);
        return handlers[operation.name]!(request, context, { scope });
      }
    }
    return errorResponse(new GatewayError('NotFound', 'No operation matches this path.'), correlationIdOf(request.headers));
  };
}
