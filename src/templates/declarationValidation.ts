/**
 * Validation of deployment-template resource declarations: one declaration, or a template's
 * `resources` array from which the matching types are picked. Each problem is reported with
 * its JSON path and a stable code. Values that are template expressions (`"[parameters('x')]"`)
 * cannot be judged before deployment and are not reported.
 */
import type { z } from 'zod';
import { jsonPathOf } from '../rules';

export interface DeclarationError {
  path: string;
  code: string;
  message: string;
}

/** Most errors an answer lists; `errorCount` counts them all. */
export const maxListedErrors = 100;

export interface ValidationResult {
  valid: boolean;
  /** How many declarations were checked. */
  checked: number;
  /** Every error found; `errors` lists the first `maxListedErrors`. */
  errorCount: number;
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

/** A path as one string key; JSON cannot tell `"0"` from `0` apart in a path, and need not. */
const pathKey = (path: readonly PropertyKey[]) => path.map(String).join('\u0000');

/** The paths of every template expression in a value, as path keys: one walk, no copies. */
function expressionPathKeys(value: unknown): Set<string> {
  const found = new Set<string>();
  const path: PropertyKey[] = [];
  const walk = (node: unknown): void => {
    if (isTemplateExpression(node)) found.add(pathKey(path));
    else if (node && typeof node === 'object') {
      for (const [key, item] of Array.isArray(node) ? node.entries() : Object.entries(node)) {
        path.push(key);
        walk(item);
        path.pop();
      }
    }
  };
  walk(value);
  return found;
}

/** Whether the issue lies at or under an expression: one set look-up per prefix of its path. */
function underExpression(issuePath: readonly PropertyKey[], expressions: ReadonlySet<string>): boolean {
  if (expressions.size === 0) return false;
  let key = pathKey([]);
  if (expressions.has(key)) return true;
  for (const [index, segment] of issuePath.entries()) {
    key = index === 0 ? String(segment) : `${key}\u0000${String(segment)}`;
    if (expressions.has(key)) return true;
  }
  return false;
}

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

/**
 * The problems of one declaration, counted into `errors`. Work is linear in the declaration
 * and its issues (issues × path depth, never issues × expressions).
 */
export function validateDeclaration(declaration: unknown, kind: DeclarationKind, errors: DeclarationErrors, pathPrefix = ''): void {
  const result = kind.schema.safeParse(declaration);
  if (result.success) return;
  const expressions = expressionPathKeys(declaration);
  for (const issue of result.error.issues) {
    if (underExpression(issue.path, expressions)) continue;
    if (!errors.hasRoom()) {
      errors.count();
      continue;
    }
    const path = jsonPathOf(issue.path);
    errors.add({
      path: pathPrefix && path ? `${pathPrefix}.${path}`.replace('.[', '[') : pathPrefix || path,
      code: codeOf(issue, declaration),
      message: issue.message,
    });
  }
}

/** Errors of a validation: all counted, the first `maxListedErrors` listed. */
export class DeclarationErrors {
  readonly listed: DeclarationError[] = [];
  total = 0;

  hasRoom(): boolean {
    return this.listed.length < maxListedErrors;
  }

  add(error: DeclarationError): void {
    this.total += 1;
    if (this.hasRoom()) this.listed.push({ ...error, path: error.path.slice(0, 512), message: error.message.slice(0, 512) });
  }

  count(): void {
    this.total += 1;
  }

  result(checked: number): ValidationResult {
    return { valid: this.total === 0, checked, errorCount: this.total, errors: this.listed };
  }
}

function matchesType(type: unknown, kind: DeclarationKind): boolean {
  return typeof type === 'string' && type.toLowerCase().endsWith(`.${kind.typeSuffix.toLowerCase()}`);
}

/**
 * A body holding a `resources` array is a template: every resource of the kind's type is
 * checked. Anything else is one declaration of that kind.
 */
export function validateDeclarations(body: unknown, kind: DeclarationKind): ValidationResult {
  const errors = new DeclarationErrors();
  const resources = (body as { resources?: unknown } | null)?.resources;
  if (!Array.isArray(resources)) {
    validateDeclaration(body, kind, errors);
    return errors.result(1);
  }
  let checked = 0;
  resources.forEach((resource, index) => {
    if (!matchesType((resource as { type?: unknown } | null)?.type, kind)) return;
    checked += 1;
    validateDeclaration(resource, kind, errors, `resources[${index}]`);
  });
  if (checked === 0) {
    errors.add({ path: 'resources', code: 'NoMatchingResource', message: `The template declares no resource of type *.${kind.typeSuffix}.` });
  }
  return errors.result(checked);
}
