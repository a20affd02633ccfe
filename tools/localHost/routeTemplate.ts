/**
 * ASP.NET route templates as the Functions host reads them: literal segments (matched without
 * regard to case), `{name}`, `{name?}`, `{*name}` catch-alls, and inline constraints such as
 * `{id:int}`, `{id:guid}`, `{name:minlength(3)}`, `{path:regex(^a.+$)}` (the regex constraint
 * ignores case, as RegexRouteConstraint does).
 */

export interface RouteParameter {
  name: string;
  optional: boolean;
  catchAll: boolean;
  constraints: ((value: string) => boolean)[];
}

export type RouteSegment = { kind: 'literal'; text: string } | { kind: 'parameter'; parameter: RouteParameter };

export interface RouteTemplate {
  template: string;
  segments: RouteSegment[];
}

const guidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function numberArgs(args: string, name: string): number[] {
  const values = args.split(',').map((part) => Number(part.trim()));
  if (values.some((value) => Number.isNaN(value))) throw new Error(`Route constraint ${name}(${args}) needs numbers.`);
  return values;
}

function buildConstraint(name: string, args: string | undefined): (value: string) => boolean {
  switch (name.toLowerCase()) {
    case 'int':
    case 'long':
      return (value) => /^-?\d+$/.test(value);
    case 'bool':
      return (value) => /^(true|false)$/i.test(value);
    case 'guid':
      return (value) => guidPattern.test(value);
    case 'alpha':
      return (value) => /^[a-z]+$/i.test(value);
    case 'decimal':
    case 'double':
    case 'float':
      return (value) => value.trim() !== '' && !Number.isNaN(Number(value));
    case 'datetime':
      return (value) => !Number.isNaN(Date.parse(value));
    case 'min': {
      const [min] = numberArgs(args ?? '', name);
      return (value) => /^-?\d+$/.test(value) && Number(value) >= min!;
    }
    case 'max': {
      const [max] = numberArgs(args ?? '', name);
      return (value) => /^-?\d+$/.test(value) && Number(value) <= max!;
    }
    case 'range': {
      const [min, max] = numberArgs(args ?? '', name);
      return (value) => /^-?\d+$/.test(value) && Number(value) >= min! && Number(value) <= max!;
    }
    case 'minlength': {
      const [min] = numberArgs(args ?? '', name);
      return (value) => value.length >= min!;
    }
    case 'maxlength': {
      const [max] = numberArgs(args ?? '', name);
      return (value) => value.length <= max!;
    }
    case 'length': {
      const [first, second] = numberArgs(args ?? '', name);
      return second === undefined ? (value) => value.length === first : (value) => value.length >= first! && value.length <= second;
    }
    case 'regex': {
      const expression = new RegExp(args ?? '', 'i');
      return (value) => expression.test(value);
    }
    default:
      throw new Error(`Unknown route constraint "${name}".`);
  }
}

/** Splits `a:regex(x:y):maxlength(3)` at colons outside parentheses. */
function splitOutsideParentheses(text: string, separator: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const char of text) {
    if (char === '(') depth += 1;
    if (char === ')') depth -= 1;
    if (char === separator && depth === 0) {
      parts.push(current);
      current = '';
    } else current += char;
  }
  parts.push(current);
  return parts;
}

function parseParameter(body: string, template: string): RouteParameter {
  const [rawName = '', ...constraintTexts] = splitOutsideParentheses(body, ':');
  let name = rawName.trim();
  const catchAll = name.startsWith('*');
  name = name.replace(/^\*{1,2}/, '');
  let optional = false;
  const lastConstraint = constraintTexts.at(-1);
  if (lastConstraint?.endsWith('?')) {
    optional = true;
    constraintTexts[constraintTexts.length - 1] = lastConstraint.slice(0, -1);
  } else if (name.endsWith('?')) {
    optional = true;
    name = name.slice(0, -1);
  }
  if (!/^\w+$/.test(name)) throw new Error(`Route template "${template}" has a parameter without a valid name: {${body}}.`);
  const constraints = constraintTexts.map((text) => {
    const match = /^(\w+)(?:\((.*)\))?$/s.exec(text);
    if (!match) throw new Error(`Route template "${template}" has a malformed constraint "${text}".`);
    return buildConstraint(match[1]!, match[2]);
  });
  return { name, optional, catchAll, constraints };
}

/** Splits the template into segments, keeping a `{…}` whole even if its regex holds a slash. */
function splitTemplate(template: string): string[] {
  const segments: string[] = [];
  let current = '';
  let braces = 0;
  let parentheses = 0;
  for (const char of template) {
    if (char === '{') braces += 1;
    if (char === '}') braces -= 1;
    if (braces > 0 && char === '(') parentheses += 1;
    if (braces > 0 && char === ')') parentheses -= 1;
    if (char === '/' && braces === 0 && parentheses === 0) {
      segments.push(current);
      current = '';
    } else current += char;
  }
  segments.push(current);
  return segments.filter((segment) => segment !== '');
}

export function parseRouteTemplate(template: string): RouteTemplate {
  const segments = splitTemplate(template.replace(/^\/+|\/+$/g, '')).map((text): RouteSegment => {
    const parameter = /^\{(.+)\}$/s.exec(text);
    if (parameter) return { kind: 'parameter', parameter: parseParameter(parameter[1]!, template) };
    if (text.includes('{') || text.includes('}'))
      throw new Error(`Route template "${template}": segments mixing literals and parameters are not supported ("${text}").`);
    return { kind: 'literal', text };
  });
  segments.forEach((segment, index) => {
    if (segment.kind === 'parameter' && segment.parameter.catchAll && index !== segments.length - 1) {
      throw new Error(`Route template "${template}": a catch-all parameter must be the last segment.`);
    }
  });
  return { template, segments };
}

/** A path segment percent-decoded, or undefined when its escapes are malformed (`%E0`). */
export function decodeSegment(raw: string): string | undefined {
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
}

/** Route values of a request path (without the route prefix), or undefined if it does not match. */
export function matchRoute(route: RouteTemplate, path: string): Record<string, string> | undefined {
  const rawSegments = path.split('/').filter((segment) => segment !== '');
  const values: Record<string, string> = {};
  for (let index = 0; index < route.segments.length; index += 1) {
    const segment = route.segments[index]!;
    const raw = rawSegments[index];
    if (segment.kind === 'literal') {
      if (raw === undefined || decodeSegment(raw)?.toLowerCase() !== segment.text.toLowerCase()) return undefined;
      continue;
    }
    const { parameter } = segment;
    const rawValue = parameter.catchAll ? rawSegments.slice(index).join('/') : raw;
    if (rawValue === undefined || rawValue === '') {
      if (!parameter.optional && !parameter.catchAll) return undefined;
      if (parameter.catchAll && parameter.constraints.length > 0 && !parameter.constraints.every((check) => check(''))) return undefined;
      continue;
    }
    const value = decodeSegment(rawValue);
    if (value === undefined || !parameter.constraints.every((check) => check(value))) return undefined;
    values[parameter.name] = value;
    if (parameter.catchAll) return values;
  }
  return rawSegments.length <= route.segments.length ? values : undefined;
}

/**
 * ASP.NET's inbound route precedence (RoutePrecedence.ComputeInbound), one digit a segment: a
 * literal 1, a constrained parameter 2, a parameter 3, a constrained catch-all 4, a catch-all 5.
 * Of two routes that match a request, the one whose digits compare lower is tried first, so
 * `orchestrations/counts` wins over `orchestrations/{id}`.
 */
export function routePrecedence(route: RouteTemplate): number[] {
  return route.segments.map((segment) => {
    if (segment.kind === 'literal') return 1;
    const base = segment.parameter.catchAll ? 5 : 3;
    return segment.parameter.constraints.length > 0 ? base - 1 : base;
  });
}

/** Below zero when `first` is tried before `second`; zero when precedence cannot order them. */
export function comparePrecedence(first: RouteTemplate, second: RouteTemplate): number {
  const [a, b] = [routePrecedence(first), routePrecedence(second)];
  for (let index = 0; index < Math.max(a.length, b.length); index += 1) {
    const difference = (a[index] ?? 0) - (b[index] ?? 0);
    if (difference !== 0) return difference;
  }
  return 0;
}

const sampleValue = 'sample';

/** A path the route matches, with each parameter given `sample`, for the overlap check. */
function samplePathFrom(segments: RouteSegment[]): string {
  return segments.map((segment) => (segment.kind === 'literal' ? segment.text : sampleValue)).join('/');
}

function segmentAccepts(segment: RouteSegment, text: string): boolean {
  if (segment.kind === 'literal') return segment.text.toLowerCase() === text.toLowerCase();
  return segment.parameter.constraints.every((check) => check(text));
}

/**
 * Whether some request could match both routes. Literals are compared exactly; a parameter
 * facing a literal is tested with that literal; two parameters are taken to overlap (the host
 * would have no order to pick by). A catch-all is tested against a sample of the other
 * route's remaining path, each of its parameters given the value `sample`: a conservative
 * reading for regex constraints, which cannot be compared in general.
 */
export function routesOverlap(first: RouteTemplate, second: RouteTemplate): boolean {
  const overlapFrom = (a: RouteSegment[], b: RouteSegment[]): boolean => {
    const [headA, ...restA] = a;
    const [headB, ...restB] = b;
    if (!headA && !headB) return true;
    if (headA?.kind === 'parameter' && headA.parameter.catchAll) return headA.parameter.constraints.every((check) => check(samplePathFrom(b)));
    if (headB?.kind === 'parameter' && headB.parameter.catchAll) return headB.parameter.constraints.every((check) => check(samplePathFrom(a)));
    if (!headA) return b.every((segment) => segment.kind === 'parameter' && segment.parameter.optional);
    if (!headB) return a.every((segment) => segment.kind === 'parameter' && segment.parameter.optional);
    if (headA.kind === 'literal' && headB.kind === 'literal') return headA.text.toLowerCase() === headB.text.toLowerCase() && overlapFrom(restA, restB);
    if (headA.kind === 'literal') return segmentAccepts(headB, headA.text) && overlapFrom(restA, restB);
    if (headB.kind === 'literal') return segmentAccepts(headA, headB.text) && overlapFrom(restA, restB);
    return overlapFrom(restA, restB);
  };
  return overlapFrom(first.segments, second.segments);
}
