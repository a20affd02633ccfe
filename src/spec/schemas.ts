/**
 * Every schema the operation catalogue's entries are made of, in the one module the catalogue
 * loads when it first needs a schema (see catalogue.ts): the spec documents' own, and the query
 * schemas the entries share.
 */
import { z } from 'zod';
import { scheduleFilter } from './authorization';
import { apiVersionQuery } from './common';

export * from './apiManagement';
export * from './authorization';
export * from './common';
export * from './containerInstance';
export * from './eventHub';
export * from './lifecycle';
export * from './resourceHealth';

export const managementQuery = z.looseObject({ 'api-version': apiVersionQuery });
export const scheduleQuery = z.looseObject({ 'api-version': apiVersionQuery, $filter: scheduleFilter.optional() });

/**
 * `{scope}`: one or more path segments such as `subscriptions/{id}/resourceGroups/{rg}` or
 * `providers/{P}.Management/managementGroups/{id}`. Segments must be non-empty and not `.`/`..`.
 */
export const scopeParam = z
  .string()
  .min(1, 'scope is required')
  .refine(
    (scope) => scope.split('/').every((segment) => segment !== '' && segment !== '.' && segment !== '..'),
    'scope must be a resource path with no empty, "." or ".." segments',
  );
