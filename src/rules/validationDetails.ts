/**
 * Turns zod issues into the documented `details` entries: one per problem, `target` naming
 * the parameter or the JSON path (fastify-type-provider-zod's shape, in ARM's words).
 */
import type { z } from 'zod';
import { GatewayError, maxListedDetails, type ErrorDetail } from '../errors';

/** `properties.containers[0].name` from ['properties', 'containers', 0, 'name']. */
export function jsonPathOf(path: readonly PropertyKey[]): string {
  return path
    .map((key, index) =>
      typeof key === 'number' ? `[${key}]` : /^[A-Za-z_$][\w$]*$/.test(String(key)) ? `${index === 0 ? '' : '.'}${String(key)}` : `['${String(key)}']`,
    )
    .join('');
}

/** Body problems: one entry per issue, `target` the JSON path. */
export function detailsFromIssues(issues: readonly z.core.$ZodIssue[], code: string): ErrorDetail[] {
  return issues.map((issue) => {
    const target = jsonPathOf(issue.path);
    return { code, message: messageOf(issue, target), target };
  });
}

/** Longest target or message listed: a key of a hostile body can be megabytes long. */
const maxTextLength = 256;

const shortened = (text: string) => (text.length > maxTextLength ? `${text.slice(0, maxTextLength - 1)}…` : text);

/**
 * The problems of one request: every one counted, the first `maxListedDetails` listed, so a
 * body with 200,000 bad items gets a small 400, not a 16 MB one.
 */
export class ProblemList {
  readonly listed: ErrorDetail[] = [];
  total = 0;

  add(detail: ErrorDetail): void {
    this.total += 1;
    if (this.listed.length < maxListedDetails) {
      this.listed.push({ ...detail, message: shortened(detail.message), ...(detail.target === undefined ? {} : { target: shortened(detail.target) }) });
    }
  }

  /** Adds one by one: never spread into a call, which overflows the stack on a long list. */
  addAll(details: Iterable<ErrorDetail>): void {
    for (const detail of details) this.add(detail);
  }

  /** zod issues as `details`: only those listed are turned into entries, the rest are counted. */
  addIssues(issues: readonly z.core.$ZodIssue[], code: string): void {
    const room = Math.max(0, maxListedDetails - this.listed.length);
    this.addAll(detailsFromIssues(issues.slice(0, room), code));
    this.total += Math.max(0, issues.length - room);
  }

  static of(details: Iterable<ErrorDetail>): ProblemList {
    const problems = new ProblemList();
    problems.addAll(details);
    return problems;
  }

  static ofIssues(issues: readonly z.core.$ZodIssue[], code: string): ProblemList {
    const problems = new ProblemList();
    problems.addIssues(issues, code);
    return problems;
  }
}

/** The 400 for a request's problems; its message says how many there are and how many are listed. */
export function invalidRequest(problems: ProblemList, message?: string): GatewayError {
  const first = problems.listed[0];
  const single = problems.total === 1 && first !== undefined;
  const count =
    problems.total > problems.listed.length
      ? `The request has ${problems.total} problems; the first ${problems.listed.length} are listed in details.`
      : `The request has ${problems.total} problems; see details.`;
  return new GatewayError('InvalidRequest', message ?? (single ? first.message : count), {
    target: single ? first.target : undefined,
    details: problems.listed,
  });
}

/**
 * Parameter problems: `target` the parameter's name as the caller wrote it, and one entry per
 * parameter (a name too short for its pattern is one problem, not two).
 */
export function detailsFromParameterIssues(issues: readonly z.core.$ZodIssue[], code: string): ErrorDetail[] {
  const byName = new Map<string, ErrorDetail>();
  for (const issue of issues) {
    const target = String(issue.path[0] ?? '');
    if (!byName.has(target)) byName.set(target, { code, message: messageOf(issue, target), target });
  }
  return [...byName.values()];
}

function messageOf(issue: z.core.$ZodIssue, target: string): string {
  if (issue.code === 'invalid_type' && /received undefined/.test(issue.message)) return `${target || 'the value'} is required`;
  return target && !issue.message.includes(target) ? `${target}: ${issue.message}` : issue.message;
}
