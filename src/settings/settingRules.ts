/**
 * The settings checks that span several settings, and how a zod issue becomes one line naming
 * its setting. Kept apart from the schema (config.ts) so each rule can run as soon as the
 * settings it reads are valid on their own: one start-up message then lists every problem,
 * per setting and across settings, instead of showing the second kind only once the first is fixed.
 */
import type { z } from 'zod';
import { azureMarkers } from './azureMarkers';
import { storageProblems, type StorageSettings } from './storageSettings';

/** A rule over some settings; `check` sees them parsed, and runs only when each of them parsed. */
export interface CrossSettingRule<S> {
  reads: readonly (keyof S & string)[];
  check(settings: S): string[];
}

const userCredential = ['LIFECYCLE_TENANT_ID', 'LIFECYCLE_CLIENT_ID', 'LIFECYCLE_USERNAME', 'LIFECYCLE_PASSWORD'] as const;

interface RuleSettings extends StorageSettings {
  LRO_MIN_POLL_SECONDS: number;
  LRO_MAX_POLL_SECONDS: number;
  CERT_ALERT_DAYS: number;
  CERT_RENEW_BEFORE_DAYS: number;
  UPSTREAM_AUTH: string;
  UPSTREAM_STATIC_TOKEN?: string;
  NOTIFY_URL?: string;
  NOTIFY_ALLOWED_ORIGINS: readonly string[];
  NOTIFY_SIGNING_SECRET?: string;
  LIFECYCLE_TENANT_ID?: string;
  LIFECYCLE_CLIENT_ID?: string;
  LIFECYCLE_USERNAME?: string;
  LIFECYCLE_PASSWORD?: string;
  ACCESS_POLICY?: readonly { approval?: { expiresAfterMinutes?: number } }[];
  APPROVAL_DEFAULT_MINUTES: number;
  APPROVAL_MAX_MINUTES: number;
}

export const crossSettingRules: CrossSettingRule<RuleSettings>[] = [
  {
    reads: ['LRO_MIN_POLL_SECONDS', 'LRO_MAX_POLL_SECONDS'],
    check: (s) =>
      s.LRO_MIN_POLL_SECONDS > s.LRO_MAX_POLL_SECONDS
        ? [`LRO_MIN_POLL_SECONDS (${s.LRO_MIN_POLL_SECONDS}) must not be above LRO_MAX_POLL_SECONDS (${s.LRO_MAX_POLL_SECONDS})`]
        : [],
  },
  {
    // health lists an environment only within CERT_RENEW_BEFORE_DAYS: a later alert could never fire.
    reads: ['CERT_ALERT_DAYS', 'CERT_RENEW_BEFORE_DAYS'],
    check: (s) =>
      s.CERT_ALERT_DAYS > s.CERT_RENEW_BEFORE_DAYS
        ? [`CERT_ALERT_DAYS (${s.CERT_ALERT_DAYS}) must not be above CERT_RENEW_BEFORE_DAYS (${s.CERT_RENEW_BEFORE_DAYS})`]
        : [],
  },
  {
    reads: ['UPSTREAM_AUTH', 'UPSTREAM_STATIC_TOKEN'],
    check: (s) => (s.UPSTREAM_AUTH === 'static' && !s.UPSTREAM_STATIC_TOKEN ? ['UPSTREAM_STATIC_TOKEN is required when UPSTREAM_AUTH is static'] : []),
  },
  {
    reads: ['NOTIFY_URL', 'NOTIFY_ALLOWED_ORIGINS', 'NOTIFY_SIGNING_SECRET'],
    check: (s) =>
      (s.NOTIFY_URL || s.NOTIFY_ALLOWED_ORIGINS.length > 0) && !s.NOTIFY_SIGNING_SECRET
        ? ['NOTIFY_SIGNING_SECRET is required when NOTIFY_URL or NOTIFY_ALLOWED_ORIGINS is set (whsec_ followed by base64)']
        : [],
  },
  {
    // A rule may not ask a start to wait longer than the app lets any wait.
    reads: ['ACCESS_POLICY', 'APPROVAL_DEFAULT_MINUTES', 'APPROVAL_MAX_MINUTES'],
    check: (s) => [
      ...(s.APPROVAL_DEFAULT_MINUTES > s.APPROVAL_MAX_MINUTES
        ? [`APPROVAL_DEFAULT_MINUTES (${s.APPROVAL_DEFAULT_MINUTES}) must not be above APPROVAL_MAX_MINUTES (${s.APPROVAL_MAX_MINUTES})`]
        : []),
      ...(s.ACCESS_POLICY ?? []).flatMap((rule, index) => {
        const minutes = rule.approval?.expiresAfterMinutes;
        return minutes !== undefined && minutes > s.APPROVAL_MAX_MINUTES
          ? [
              `ACCESS_POLICY [${index}].approval.expiresAfterMinutes (${minutes}) must not be above APPROVAL_MAX_MINUTES (${s.APPROVAL_MAX_MINUTES}): shorten the rule's wait or raise APPROVAL_MAX_MINUTES`,
            ]
          : [];
      }),
    ],
  },
  {
    // One storage, named once; in Azure never development storage.
    reads: [
      'AzureWebJobsStorage',
      'AzureWebJobsStorage__accountName',
      'AzureWebJobsStorage__blobServiceUri',
      'AzureWebJobsStorage__credential',
      'AzureWebJobsStorage__clientId',
      'AzureWebJobsStorage__managedIdentityResourceId',
      ...azureMarkers,
    ],
    check: storageProblems,
  },
  {
    reads: [...userCredential],
    check: (s) => {
      const given = userCredential.filter((name) => s[name] !== undefined);
      return given.length > 0 && given.length < userCredential.length
        ? userCredential.filter((name) => s[name] === undefined).map((name) => `${name} is required with the other LIFECYCLE_ user credential settings`)
        : [];
    },
  },
];

/**
 * One line for an issue: the setting, where inside a JSON setting (`ACCESS_POLICY [2].allow[0]`),
 * and what it accepts. Nothing of the value is repeated: a JSON setting may hold secrets, so an
 * object key shows only when it is one the schema itself names (`knownKeys`), and zod's
 * "Unrecognized key" message, which quotes the keys, is replaced.
 */
export function describeIssue(name: string, issue: z.core.$ZodIssue, given: string | undefined, knownKeys: ReadonlySet<string>): string {
  const where = issue.path
    .map((key) => (typeof key === 'number' ? `[${key}]` : knownKeys.has(String(key)) ? `.${String(key)}` : '[a key]'))
    .join('')
    .replace(/^\./, '');
  const detail =
    issue.code === 'invalid_type' && given === undefined
      ? 'is required'
      : issue.code === 'unrecognized_keys'
        ? `has ${issue.keys.length === 1 ? 'a property' : `${issue.keys.length} properties`} it does not accept`
        : issue.message;
  return `${name}${where ? ` ${where}` : ''} ${detail}`;
}
