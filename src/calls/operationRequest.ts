/**
 * Validates a call of a catalogue operation before anything is sent upstream: path
 * parameters, named query parameters and the body, every problem reported at once.
 */
import type { ErrorDetail } from '../errors';
import type { OperationSpec } from '../spec';
import { parseJsonBody, type ParsedBody } from '../rules';
import { waitSecondsOf } from './orchestrationQueries';
import { appParameterOf, isAppQueryParameter } from '../rules';
import { detailsFromParameterIssues, invalidRequest, ProblemList } from '../rules';

export interface ValidatedCall {
  params: Record<string, string>;
  /** Query parameters to forward upstream, in their order. */
  forwardQuery: [string, string][];
  body?: ParsedBody;
  /** `gateway-pages`: how many pages to merge, if the caller asked. */
  mergePages?: number;
  /** `gateway-wait`: how long to hold a long-running start's answer for its end, if asked. */
  waitSeconds?: number;
}

export interface IncomingCall {
  params: Record<string, string>;
  /** Every pair as sent, repeats included (see requestQuery.ts). */
  query: URLSearchParams;
  contentType: string | null;
  bodyBytes: Uint8Array;
}

/**
 * A path parameter never holds a separator or a relative segment, whatever its schema says:
 * `%2F` and `..` decoded by a host must not reshape the upstream path.
 */
function pathParameterProblems(params: Record<string, string>): ErrorDetail[] {
  return Object.entries(params)
    .filter(([name, value]) => name !== 'scope' && (/[/\\\u0000-\u001f\u007f]/.test(value) || value === '.' || value === '..'))
    .map(([name]) => ({
      code: 'InvalidParameter',
      target: name,
      message: `${name} must be one path segment, without "/", "\\", control characters, "." or "..".`,
    }));
}

export function parseMergePages(raw: string | null, maxPages: number): number | ErrorDetail | undefined {
  if (raw === null) return undefined;
  if (raw === 'all') return maxPages;
  if (/^[1-9][0-9]{0,5}$/.test(raw)) return Math.min(Number(raw), maxPages);
  return { code: 'InvalidParameter', target: 'gateway-pages', message: 'gateway-pages must be "all" or a whole number of pages from 1.' };
}

export function validateOperationCall(
  operation: OperationSpec,
  call: IncomingCall,
  limits: { maxBodyBytes: number; maxPages: number; maxWaitSeconds: number },
): ValidatedCall {
  const problems = new ProblemList();
  problems.addAll(pathParameterProblems(call.params));

  const params = operation.pathParams.safeParse(call.params);
  if (!params.success) {
    const reported = new Set(problems.listed.map((detail) => detail.target));
    problems.addAll(detailsFromParameterIssues(params.error.issues, 'InvalidParameter').filter((detail) => !reported.has(detail.target)));
  }

  // A map with no prototype: names such as `constructor` or `__proto__` are plain names here.
  const namedQuery = new Map<string, string>();
  for (const [name, value] of call.query) {
    if (isAppQueryParameter(name)) continue;
    if (namedQuery.has(name)) problems.add({ code: 'InvalidParameter', target: name, message: `${name} is given more than once.` });
    namedQuery.set(name, value);
  }
  const query = operation.query.safeParse(Object.fromEntries(namedQuery));
  if (!query.success) problems.addAll(detailsFromParameterIssues(query.error.issues, 'InvalidParameter'));

  const mergePages = operation.pageable ? parseMergePages(appParameterOf(call.query, 'gateway-pages'), limits.maxPages) : undefined;
  if (typeof mergePages === 'object') problems.add(mergePages);
  const waitSeconds = waitSecondsOf(call.query, limits.maxWaitSeconds);
  if (typeof waitSeconds === 'object') problems.add(waitSeconds);
  else if (waitSeconds !== undefined && !operation.longRunning) {
    problems.add({ code: 'InvalidParameter', target: 'gateway-wait', message: 'gateway-wait applies to long-running operations only.' });
  }

  let body: ParsedBody | undefined;
  if (operation.body || call.bodyBytes.byteLength > 0) {
    const bodyName = operation.body?.name ?? 'body';
    // Size, media type and JSON syntax problems make the rest meaningless: they are thrown alone.
    body = parseJsonBody(call.bodyBytes, call.contentType, limits.maxBodyBytes, bodyName);
    if (!operation.body && body) {
      problems.add({ code: 'InvalidRequestBody', target: 'body', message: `${operation.operationId} takes no request body.` });
    } else if (operation.body && !body && operation.body.required) {
      problems.add({ code: 'InvalidRequestBody', target: bodyName, message: `The request body (${bodyName}) is required.` });
    } else if (operation.body && body) {
      const parsed = operation.body.schema.safeParse(body.value);
      if (!parsed.success) problems.addIssues(parsed.error.issues, 'InvalidRequestBody');
    }
  }

  if (problems.total > 0) throw invalidRequest(problems);

  const forwardQuery = [...call.query].filter(([name]) => !isAppQueryParameter(name));
  return {
    params: call.params,
    forwardQuery,
    body,
    mergePages: typeof mergePages === 'number' ? mergePages : undefined,
    waitSeconds: typeof waitSeconds === 'number' ? waitSeconds : undefined,
  };
}
