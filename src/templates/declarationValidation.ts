/**
 * Validation of deployment-template resource declarations: one declaration, or a template's
 * `resources` array from which the matching types are picked. Each problem is reported with
 * its JSON path and a stable code. Values that are template expressions (`"[parameters('x')]"`)
 * cannot be judged before deployment and are not reported.
 */
import type { z } from 'zod';
import { jsonPathOf } from '../http/validationDetails';

export interface DeclarationError {
  path: string;
  code: string;
  message: string;
}

export interface ValidationResult {
  valid: boolean;
  /** How many declarations were checked. */
  checked: number;
  errors: DeclarationError[];
  warnings?: DeclarationError[];
}

export interface DeclarationKind {
  /** Resource type without its provider namespace, e.g. `Compute/galleries/images/versions`. */
  typeSuffix: string;
  schema: z.ZodType;
}

/** Adds a problem of a cross-field rule, with its stable code. */
export function addDeclarationIssue(ctx: z.core.$RefinementCtx, code: string, message: string, path: PropertyKey[]): void {
  ctx.addIssue({ code: 'custom', message, path, params: { code } });
}

export function isTemplateExpression(value: unknown): boolean {
  return typeof value === 'string' && value.startsWith('[') && value.endsWith(']') && !value.startsWith('[[');
}

/** Paths (as key lists) of every template expression in a value. */
function expressionPaths(value: unknown, path: PropertyKey[] = [], found: PropertyKey[][] = []): PropertyKey[][] {
  if (isTemplateExpression(value)) found.push(path);
  else if (Array.isArray(value)) value.forEach((item, index) => expressionPaths(item, [...path, index], found));
  else if (value && typeof value === 'object') for (const [key, item] of Object.entries(value)) expressionPaths(item, [...path, key], found);
  return found;
}

const startsWith = (path: readonly PropertyKey[], prefix: readonly PropertyKey[]) => prefix.every((key, index) => path[index] === key);

function valueAt(value: unknown, path: readonly PropertyKey[]): unknown {
  return path.reduce<unknown>((current, key) => (current && typeof current === 'object' ? (current as Record<PropertyKey, unknown>)[key] : undefined), value);
}

/** Stable codes for zod's issue kinds; custom checks carry their own in `params.code`. */
function codeOf(issue: z.core.$ZodIssue, declaration: unknown): string {
  if (issue.code === 'custom') return String((issue.params as { code?: string } | undefined)?.code ?? 'InvalidValue');
  if (issue.code === 'invalid_type') return valueAt(declaration, issue.path) === undefined ? 'Required' : 'InvalidType';
  if (issue.code === 'invalid_value') return 'InvalidEnumValue';
  if (issue.code === 'invalid_format') return 'PatternMismatch';
  if (issue.code === 'too_small') return 'TooSmall';
  if (issue.code === 'too_big') return 'TooLarge';
  return 'InvalidValue';
}

export function validateDeclaration(declaration: unknown, kind: DeclarationKind, pathPrefix = ''): DeclarationError[] {
  const result = kind.schema.safeParse(declaration);
  if (result.success) return [];
  const expressions = expressionPaths(declaration);
  return result.error.issues
    .filter((issue) => !expressions.some((expressionPath) => startsWith(issue.path, expressionPath)))
    .map((issue) => {
      const path = jsonPathOf(issue.path);
      return { path: pathPrefix && path ? `${pathPrefix}.${path}`.replace('.[', '[') : pathPrefix || path, code: codeOf(issue, declaration), message: issue.message };
    });
}

function matchesType(type: unknown, kind: DeclarationKind): boolean {
  return typeof type === 'string' && type.toLowerCase().endsWith(`.${kind.typeSuffix.toLowerCase()}`);
}

/**
 * A body holding a `resources` array is a template: every resource of the kind's type is
 * checked. Anything else is one declaration of that kind.
 */
export function validateDeclarations(body: unknown, kind: DeclarationKind): ValidationResult {
  const resources = (body as { resources?: unknown } | null)?.resources;
  if (!Array.isArray(resources)) {
    const errors = validateDeclaration(body, kind);
    return { valid: errors.length === 0, checked: 1, errors };
  }
  const matching = resources.map((resource, index) => ({ resource, index })).filter(({ resource }) => matchesType((resource as { type?: unknown } | null)?.type, kind));
  if (matching.length === 0) {
    return { valid: false, checked: 0, errors: [{ path: 'resources', code: 'NoMatchingResource', message: `The template declares no resource of type *.${kind.typeSuffix}.` }] };
  }
  const errors = matching.flatMap(({ resource, index }) => validateDeclaration(resource, kind, `resources[${index}]`));
  return { valid: errors.length === 0, checked: matching.length, errors };
}
