/**
 * The chat commands, read from the text a user typed. A small closed grammar: every argument is
 * checked against the pattern of what it names (a GUID, a resource name, a location), so no
 * text ever reaches a URL or a path as it was typed, and anything else is answered with the
 * usage message.
 *
 *   help
 *   status <id>                 wait <id>                 terminate <id>
 *   list [running|failed|completed|terminated] [since <n>h|<n>d]
 *   approve <id>                reject <id> [reason]
 *   migrate <subscription>/<resourceGroup>/<service> [PreserveIp|NewIP]
 *   cert <project>/<environment>
 *   usage <subscription> <location>
 */
import { maxReasonChars } from '../approvals';

/** The longest reason `reject` takes: what a decision keeps (the command's own bound, CHATOPS_MAX_COMMAND_CHARS, comes first). */
export { maxReasonChars };

export type ChatCommand =
  | { kind: 'help' }
  | { kind: 'status' | 'wait' | 'terminate'; id: string }
  | { kind: 'list'; runtimeStatus?: ListedStatus; sinceHours?: number }
  | { kind: 'approve'; id: string }
  | { kind: 'reject'; id: string; reason?: string }
  | { kind: 'migrate'; subscriptionId: string; resourceGroupName: string; serviceName: string; mode: 'PreserveIp' | 'NewIP' }
  | { kind: 'cert'; projectId: string; environmentId: string }
  | { kind: 'usage'; subscriptionId: string; location: string };

export type ListedStatus = 'Running' | 'Failed' | 'Completed' | 'Terminated';

export type ParsedCommand = { ok: true; command: ChatCommand } | { ok: false; problem: string };

export const commandUsage = [
  '`help` — this list',
  '`status <id>` — where an operation stands',
  '`wait <id>` — its end, if it comes within a few seconds; else where it stands',
  '`terminate <id>` — stop tracking an operation',
  '`list [running|failed|completed|terminated] [since 24h|7d]` — your latest operations',
  '`approve <id>` — approve a start that waits for your approval',
  '`reject <id> [reason]` — reject it, saying why',
  '`migrate <subscription>/<resourceGroup>/<service> [PreserveIp|NewIP]` — migrate an API Management service to stv2',
  '`cert <project>/<environment>` — the stored certificate of an environment',
  '`usage <subscription> <location>` — container group usage in a location',
];

const guid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
// Azure's own limits: resource group 1-90 of letters, digits, _ - . ( ) (not ending in .);
// API Management service 1-50 of letters, digits and hyphens, starting with a letter.
const resourceGroup = /^[\w\-.()]{1,89}[\w\-()]$|^[\w\-()]$/;
const serviceName = /^[A-Za-z][A-Za-z0-9-]{0,49}$/;
const location = /^[A-Za-z][A-Za-z0-9]{1,39}$/;
const projectId = /^\d{1,10}$/;
const listedStatuses: Record<string, ListedStatus> = { running: 'Running', failed: 'Failed', completed: 'Completed', terminated: 'Terminated' };
/** The furthest back `list … since` reaches: a year. */
const maxSinceHours = 24 * 366;

const fail = (problem: string): ParsedCommand => ({ ok: false, problem });
const done = (command: ChatCommand): ParsedCommand => ({ ok: true, command });

function idCommand(kind: 'status' | 'wait' | 'terminate', args: string[]): ParsedCommand {
  if (args.length !== 1 || !guid.test(args[0]!)) return fail(`\`${kind}\` takes one operation id (a GUID), e.g. \`${kind} 0b5c…\`.`);
  return done({ kind, id: args[0]!.toLowerCase() });
}

/**
 * `approve <id>`, `reject <id> [reason]`. The reason is the rest of the text as typed (spaces
 * within it kept, control characters taken out), bounded with the command by the caller's
 * `maxChars` and again here, so a stored decision never holds more than a line's worth.
 */
function decisionCommand(kind: 'approve' | 'reject', text: string, args: string[]): ParsedCommand {
  if (args.length < 1 || !guid.test(args[0]!) || (kind === 'approve' && args.length > 1)) {
    return fail(
      kind === 'approve'
        ? '`approve` takes one operation id (a GUID), e.g. `approve 0b5c…`.'
        : '`reject` takes an operation id (a GUID) and, if you like, why: `reject 0b5c… not during the freeze`.',
    );
  }
  const id = args[0]!.toLowerCase();
  if (kind === 'approve') return done({ kind, id });
  const reason = text
    .trim()
    .replace(/^\S+\s+\S+/, '')
    .replace(/[\u0000-\u001f\u007f]+/g, ' ')
    .trim();
  if (reason.length > maxReasonChars) return fail(`A reason is at most ${maxReasonChars} characters.`);
  return done(reason ? { kind, id, reason } : { kind, id });
}

function listCommand(args: string[]): ParsedCommand {
  const rest = [...args];
  let runtimeStatus: ListedStatus | undefined;
  let sinceHours: number | undefined;
  if (rest[0] && listedStatuses[rest[0].toLowerCase()]) runtimeStatus = listedStatuses[rest.shift()!.toLowerCase()];
  if (rest[0]?.toLowerCase() === 'since') {
    const match = /^(\d{1,4})([hd])$/i.exec(rest[1] ?? '');
    if (!match) return fail('`since` takes hours or days, e.g. `since 24h` or `since 7d`.');
    sinceHours = Number(match[1]) * (match[2]!.toLowerCase() === 'd' ? 24 : 1);
    if (sinceHours < 1 || sinceHours > maxSinceHours) return fail(`\`since\` reaches back 1 hour to ${maxSinceHours / 24} days.`);
    rest.splice(0, 2);
  }
  if (rest.length > 0) return fail('`list` takes a status (running, failed, completed, terminated) and `since <n>h` or `since <n>d`, in that order.');
  return done({ kind: 'list', runtimeStatus, sinceHours });
}

function migrateCommand(args: string[]): ParsedCommand {
  const parts = (args[0] ?? '').split('/');
  const mode = args[1] === undefined ? 'PreserveIp' : ['PreserveIp', 'NewIP'].find((known) => known.toLowerCase() === args[1]!.toLowerCase());
  if (
    args.length < 1 ||
    args.length > 2 ||
    parts.length !== 3 ||
    !guid.test(parts[0]!) ||
    !resourceGroup.test(parts[1]!) ||
    !serviceName.test(parts[2]!) ||
    !mode
  ) {
    return fail('`migrate` takes `<subscription id>/<resource group>/<service name>` and optionally `PreserveIp` or `NewIP`.');
  }
  return done({
    kind: 'migrate',
    subscriptionId: parts[0]!.toLowerCase(),
    resourceGroupName: parts[1]!,
    serviceName: parts[2]!,
    mode: mode as 'PreserveIp' | 'NewIP',
  });
}

function certCommand(args: string[]): ParsedCommand {
  const parts = (args[0] ?? '').split('/');
  if (args.length !== 1 || parts.length !== 2 || !projectId.test(parts[0]!) || !guid.test(parts[1]!)) {
    return fail('`cert` takes `<project id>/<environment id>`: a number and a GUID.');
  }
  return done({ kind: 'cert', projectId: parts[0]!, environmentId: parts[1]!.toLowerCase() });
}

function usageCommand(args: string[]): ParsedCommand {
  if (args.length !== 2 || !guid.test(args[0]!) || !location.test(args[1]!))
    return fail('`usage` takes a subscription id and a location, e.g. `usage <subscription id> westeurope`.');
  return done({ kind: 'usage', subscriptionId: args[0]!.toLowerCase(), location: args[1]!.toLowerCase() });
}

/** Reads a command; `maxChars` bounds what is read at all. */
export function parseCommand(text: string, maxChars: number): ParsedCommand {
  if (text.length > maxChars) return fail(`A command is at most ${maxChars} characters.`);
  const [verb = '', ...args] = text.trim().split(/\s+/).filter(Boolean);
  switch (verb.toLowerCase()) {
    case '':
    case 'help':
      return args.length === 0 ? done({ kind: 'help' }) : fail('`help` takes nothing.');
    case 'status':
    case 'wait':
    case 'terminate':
      return idCommand(verb.toLowerCase() as 'status' | 'wait' | 'terminate', args);
    case 'list':
      return listCommand(args);
    case 'approve':
    case 'reject':
      return decisionCommand(verb.toLowerCase() as 'approve' | 'reject', text, args);
    case 'migrate':
      return migrateCommand(args);
    case 'cert':
      return certCommand(args);
    case 'usage':
      return usageCommand(args);
    default:
      return fail('That is not a command this app knows.');
  }
}
