/**
 * Turns zod issues into the documented `details` entries: one per problem, `target` naming
 * the parameter or the JSON path (fastify-type-provider-zod's shape, in ARM's words).
 */
import type { z } from 'zod';
import type { ErrorDetail } from '../errors';

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
