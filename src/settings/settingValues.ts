/**
 * The kinds of value a setting takes, for the settings schema (src/settings/config.ts, where every
 * setting is declared): URLs, numbers in a range, JSON, timer schedules, secrets, origins, and
 * the shapes of the JSON settings (an ACCESS_POLICY rule, a certificate environment). Each says
 * in its message what it accepts, and none repeats a secret it refuses.
 */
import { z } from 'zod';
import { appRoutes } from '../routes';
import { operations } from '../spec';
import { parseTimerSchedule } from './timerSchedule';

/** Why `text` is not a plain absolute http(s) base URL, or undefined when it is one. */
export function baseUrlProblem(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'must be an absolute http or https URL';
  }
  if (!/^https?:$/.test(url.protocol)) return 'must be an absolute http or https URL';
  // User info would be sent to no one and a query would swallow every path appended to it.
  if (url.username || url.password) return 'must not hold user info (user:password@)';
  if (url.search || text.includes('?')) return 'must not have a query';
  if (url.hash || text.includes('#')) return 'must not have a fragment';
  return undefined;
}

export const httpUrlText = z.string().superRefine((value, ctx) => {
  const problem = baseUrlProblem(value);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

export const absoluteHttpUrl = httpUrlText.transform((value) => value.replace(/\/+$/, ''));

/**
 * The public base URL as WHATWG URL writes it (host in punycode, path percent-encoded,
 * backslashes read as slashes, default port dropped): every link and header built on it is then
 * ASCII, so none can fail once the upstream has been called.
 */
export const publicBaseUrl = httpUrlText.transform((value) => new URL(value).href.replace(/\/+$/, ''));

/**
 * Why a storage connection string cannot work, or undefined. It follows the storage SDK's own
 * reading (`extractConnectionStringParts`: names are case-sensitive; `UseDevelopmentStorage=true`
 * must come first; `DefaultEndpointsProtocol=` with `AccountKey=` makes an account string, which
 * needs AccountName and, without a BlobEndpoint, an EndpointSuffix; anything else is a SAS string,
 * which needs BlobEndpoint and SharedAccessSignature), so a string the SDK would refuse on the
 * first call stops start-up instead. The message never repeats the value: it holds a key.
 */
export function storageConnectionProblem(text: string): string | undefined {
  if (text.startsWith('UseDevelopmentStorage=true')) return undefined;
  const parts = new Map<string, string>();
  for (const pair of text
    .split(';')
    .map((part) => part.trim())
    .filter(Boolean)) {
    const equals = pair.indexOf('=');
    if (equals <= 0) return 'must be a connection string of Name=value pairs separated by ";"';
    parts.set(pair.slice(0, equals), pair.slice(equals + 1));
  }
  const endpoint = parts.get('BlobEndpoint');
  if (endpoint !== undefined && baseUrlProblem(endpoint)) return 'has a BlobEndpoint that is not an absolute http or https URL without query';
  if (parts.has('DefaultEndpointsProtocol') && parts.has('AccountKey')) {
    if (!parts.get('AccountName')) return 'needs AccountName';
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(parts.get('AccountKey') ?? '')) return 'needs an AccountKey in base64';
    if (endpoint === undefined) {
      if (!/^https?$/i.test(parts.get('DefaultEndpointsProtocol') ?? '')) return 'needs DefaultEndpointsProtocol http or https';
      if (!parts.get('EndpointSuffix')) return 'needs EndpointSuffix (or BlobEndpoint)';
    }
    return undefined;
  }
  if (endpoint === undefined || !parts.get('SharedAccessSignature')) {
    return 'needs DefaultEndpointsProtocol, AccountName and AccountKey, or BlobEndpoint and SharedAccessSignature (or UseDevelopmentStorage=true)';
  }
  return undefined;
}

export const jsonText = <T extends z.ZodType>(schema: T, example: string) =>
  z
    .string()
    .transform((text, ctx) => {
      try {
        return JSON.parse(text) as unknown;
      } catch {
        ctx.addIssue({ code: 'custom', message: `must be JSON, e.g. ${example}` });
        return z.NEVER;
      }
    })
    .pipe(schema);

/** A timer schedule the Functions host accepts (src/settings/timerSchedule.ts); anything else fails at start-up. */
export const timerSchedule = z.string().superRefine((text, ctx) => {
  try {
    parseTimerSchedule(text);
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: (error as Error).message });
  }
});

/** A whole number in a range; any other text gets the one message that says what is accepted. */
export const integerText = (min: number, max: number) => {
  const error = `must be a whole number from ${min} to ${max}`;
  return z.coerce.number({ error }).int({ error }).min(min, { error }).max(max, { error });
};

/** A number (fractions allowed) in a range, with the same kind of message. */
export const numberText = (min: number, max: number, options: { positive?: boolean } = {}) => {
  const error = `must be a number ${options.positive ? `above ${min}` : `from ${min}`} up to ${max}`;
  const number = z.coerce.number({ error });
  return (options.positive ? number.positive({ error }) : number.min(min, { error })).max(max, { error });
};

export const scopePrefix = z
  .string()
  .regex(/^\/(subscriptions|providers)\/[^/]+(\/[^/]+)*$/i, 'must start with /subscriptions/ or /providers/ and have no empty segment');

/** A URL to notify: absolute http(s), no user info (a query may carry the receiver's own key). */
export const notifyUrl = z
  .string()
  .max(2048)
  .superRefine((value, ctx) => {
    const problem = baseUrlProblem(value.split('?')[0]!);
    if (problem && !/query/.test(problem)) ctx.addIssue({ code: 'custom', message: problem });
  });

/** An origin exactly as URL.origin writes it: scheme, host and port, nothing else. */
export const origin = z.string().refine((value) => {
  try {
    return /^https?:$/.test(new URL(value).protocol) && new URL(value).origin === value;
  } catch {
    return false;
  }
}, 'each must be an origin such as https://hooks.example.com (scheme, host and port; no path)');

/** Standard Webhooks' key form: `whsec_` and the base64 of 24 to 64 random bytes. */
export const signingSecret = z.string().refine((value) => {
  const match = /^whsec_([A-Za-z0-9+/]+={0,2})$/.exec(value);
  const bytes = match ? Buffer.from(match[1]!, 'base64').length : 0;
  return bytes >= 24 && bytes <= 64;
}, 'must be whsec_ followed by the base64 of 24 to 64 random bytes');

/** The classes of calls a rule may allow by name (src/access/accessPolicy.ts says what each holds). */
export const accessClasses = ['read', 'write', 'secrets', 'admin'] as const;
export type AccessClass = (typeof accessClasses)[number];

/** What a rule may allow: an operation id or function name, an app route's name, or a class. */
const allowable = new Set<string>([
  ...operations.flatMap((operation) => [operation.operationId, operation.name]),
  ...Object.values(appRoutes).map((route) => route.name),
  ...accessClasses,
]);

/** A caller as a rule names it (`*` aside): a key, a principal, an app role, a Slack or Teams user. */
const namedCaller =
  /key:[0-9a-fA-F]{12}|principal:[\w.@-]{1,128}|role:[\w.:/ -]{1,128}|slack:[A-Z0-9]{1,32}\/[A-Z0-9]{1,32}|teams:[0-9a-fA-F-]{36}\/[0-9a-fA-F-]{36}/;

/** Most approvers one rule names, most approvals it asks, and the longest wait any rule may give (APPROVAL_MAX_MINUTES bounds it further). */
export const approvalBounds = { maxApprovers: 20, maxCount: 10, maxMinutes: 30 * 24 * 60 } as const;

/** What a rule asks of its starts: approvals by distinct approvers, within a time (docs/approvals.md). */
const ruleApproval = z.strictObject({
  count: z.number().int().min(1).max(approvalBounds.maxCount),
  approvers: z
    .array(
      z
        .string()
        .regex(
          new RegExp(`^(${namedCaller.source})$`),
          'each approver must be key:<12 hex digits>, principal:<object id>, role:<app role>, slack:<team id>/<user id> or teams:<tenant id>/<AAD object id> (not *)',
        ),
    )
    .min(1)
    .max(approvalBounds.maxApprovers),
  expiresAfterMinutes: z.number().int().min(1).max(approvalBounds.maxMinutes).optional(),
});

export const accessRule = z.strictObject({
  callers: z
    .array(
      z
        .string()
        .regex(
          new RegExp(`^(\\*|${namedCaller.source})$`),
          'each caller must be key:<12 hex digits>, principal:<object id>, role:<app role>, slack:<team id>/<user id>, teams:<tenant id>/<AAD object id> or *',
        ),
    )
    .min(1)
    .max(100),
  allow: z
    .array(z.string().refine((entry) => allowable.has(entry), 'each allow entry must be an operation id, an app route name, or read, write, secrets, admin'))
    .min(1)
    .max(100),
  scopes: z.array(scopePrefix).min(1).max(100).optional(),
  rate: z
    .strictObject({ readsPerMinute: z.number().int().min(0).max(1_000_000).optional(), writesPerMinute: z.number().int().min(0).max(1_000_000).optional() })
    .optional(),
  approval: ruleApproval.optional(),
});

export const certificateEnvironment = z.object({
  // What the routes accept (src/spec/lifecycle.ts): an environment they would refuse could
  // never be read or refreshed on demand.
  projectId: z.number().int().nonnegative().max(2147483647),
  environmentId: z.guid(),
});

/** One environment whose certificate the app keeps (CERT_ENVIRONMENTS): the lifecycle service's project and environment. */
export type CertificateEnvironment = z.output<typeof certificateEnvironment>;

/** A chat platform's secret: long enough to be one, and never repeated in a message. */
export const chatSecret = z.string().min(16, 'must be the secret the platform shows (at least 16 characters)').max(512, 'must be at most 512 characters');

/** A storage connection string the storage SDK would take (storageConnectionProblem). */
export const storageConnectionString = z
  .string()
  .min(1)
  .superRefine((value, ctx) => {
    const problem = storageConnectionProblem(value);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

/** A blob container's name as Azure Storage takes it. */
export const containerName = z.string().regex(/^[a-z0-9](?!.*--)[a-z0-9-]{1,61}[a-z0-9]$/, 'must be a blob container name');

/**
 * How the host (and so the app's exporter) signs in to an Application Insights with local auth
 * off: Microsoft Entra ID, with the system-assigned identity or the user-assigned one named.
 */
export const appInsightsAuthentication = z.string().transform((text, ctx) => {
  const parts = new Map(
    text
      .split(';')
      .filter(Boolean)
      .map((pair) => [
        pair
          .slice(0, Math.max(0, pair.indexOf('=')))
          .trim()
          .toLowerCase(),
        pair.slice(pair.indexOf('=') + 1).trim(),
      ]),
  );
  const clientId = parts.get('clientid');
  const known = [...parts.keys()].every((key) => key === 'authorization' || key === 'clientid');
  if (!known || parts.get('authorization')?.toUpperCase() !== 'AAD' || (clientId !== undefined && !z.guid().safeParse(clientId).success)) {
    ctx.addIssue({
      code: 'custom',
      message: 'must be Authorization=AAD (the system-assigned identity) or Authorization=AAD;ClientId=<client id of a user-assigned identity>',
    });
    return z.NEVER;
  }
  return { clientId };
});

/** Names a JSON setting's path may show: the schema's own property names and operation ids. */
export const jsonSettingKeys: ReadonlySet<string> = new Set<string>([
  ...Object.keys(accessRule.shape),
  'readsPerMinute',
  'writesPerMinute',
  ...Object.keys(ruleApproval.shape),
  ...Object.keys(certificateEnvironment.shape),
  ...operations.flatMap((operation) => [operation.operationId, operation.name]),
]);
