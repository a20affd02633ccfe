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

export function detailsFromIssues(issues: readonly z.core.$ZodIssue[], code: string, prefix?: string): ErrorDetail[] {
  return issues.map((issue) => {
    const path = jsonPathOf(issue.path);
    const target = prefix === undefined ? path : path === '' ? prefix : `${prefix}.${path}`.replace('.[', '[');
    return { code, message: messageOf(issue, target), target };
  });
}

function messageOf(issue: z.core.$ZodIssue, target: string): string {
  if (issue.code === 'invalid_type' && /received undefined/.test(issue.message)) return `${target || 'the value'} is required`;
  return target && !issue.message.includes(target) ? `${target}: ${issue.message}` : issue.message;
}
