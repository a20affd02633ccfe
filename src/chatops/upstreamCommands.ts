/**
 * The commands that reach the catalogue's operations (`migrate`, `usage`) or the certificate
 * store (`cert`). A command becomes the documented call it stands for, built from checked
 * arguments only, and goes through the same preparation as an HTTP caller's (rights, scopes,
 * rate, validation) before anything is sent upstream.
 *
 * A start is answered as soon as its orchestration exists (its id is known before the upstream
 * is called), so a slow upstream never holds the acknowledgement past the platform's limit; the
 * start goes on, and its end reaches the chat through the orchestration's outbox.
 */
import { actionOf, appRoutes } from '../routes';
import { fetchedCertificate } from '../certificates';
import { GatewayError, toGatewayError } from '../errors';
import { grantFor } from '../calls';
import { runOperation, type OperationCall, type OperationResult } from '../calls';
import { failureForLog } from '../rules';
import { operations, type OperationSpec } from '../spec';
import { isListPage } from '../upstream';
import { parseUpstreamJson } from '../upstream';
import { inOperation } from '../telemetry';
import type { ChatReply } from './chatMessages';
import { after, type ChatCall } from './chatCall';
import type { ChatCommand } from './commandGrammar';
import { stateReply } from './orchestrationCommands';
import { approvalOf } from '../approvals';
import { waitingReply } from './approvalReplies';

const operationOf = (operationId: string): OperationSpec => operations.find((operation) => operation.operationId === operationId)!;

/**
 * In `passthrough` mode the upstream is called with each caller's own token, and a chat request
 * carries none: the user is told the app is not set up for it, the operator which setting is.
 */
function refuseWithoutOwnCredential(call: ChatCall, operation: OperationSpec): void {
  if (call.services.tokens.mode !== 'passthrough') return;
  call.log(
    `A chat command (${operation.operationId}, correlation id ${call.correlationId}) was not sent upstream: UPSTREAM_AUTH=passthrough forwards each caller's own token, ` +
      'and a chat request carries none. To let chat commands call the upstream, set UPSTREAM_AUTH to managed (or static).',
  );
  throw new GatewayError('MissingBearerToken', 'This app is set up so that chat commands cannot call the management service; its operators can change that.');
}

/**
 * The documented call a command stands for, as the one pipeline takes it (src/calls/operationCall.ts):
 * built from checked arguments only, with the command's own call record (the chat route's frame
 * logs the chat request's).
 */
function operationCallOf(call: ChatCall, operation: OperationSpec, params: Record<string, string>, body?: unknown): OperationCall {
  refuseWithoutOwnCredential(call, operation);
  const bytes = body === undefined ? undefined : new TextEncoder().encode(JSON.stringify(body));
  return {
    operation,
    caller: call.caller,
    params,
    query: new URLSearchParams({ 'api-version': operation.apiVersion }),
    ...(bytes ? { body: { contentType: 'application/json', read: async () => bytes } } : {}),
    correlationId: call.correlationId,
    startedMs: call.services.now(),
    appBaseFor: () => call.appBase,
    record: {},
  };
}

type Settled = { result: OperationResult } | { error: unknown };

async function migrate(call: ChatCall, command: Extract<ChatCommand, { kind: 'migrate' }>): Promise<ChatReply> {
  const { services } = call;
  const operation = operationOf('ApiManagementService_MigrateToStv2');
  const params = { subscriptionId: command.subscriptionId, resourceGroupName: command.resourceGroupName, serviceName: command.serviceName };
  let announce: (id: string) => void = () => undefined;
  const announced = new Promise<string>((resolve) => (announce = resolve));
  // Sent at once, or held for approval when a rule of the user asks one (then nothing is sent now).
  const starting: Promise<Settled> = inOperation(operation.operationId, () =>
    runOperation(services, {
      ...operationCallOf(call, operation, params, { mode: command.mode }),
      endTarget: call.endTarget,
      onStored: (pending) => announce(pending.id),
    }),
  ).then(
    (result) => ({ result }),
    (error: unknown) => ({ error }),
  );
  // The start outlives the answer (and the invocation) when the upstream is slow: what it meets
  // goes to the process log, as the engine's own lines do, and its end reaches the chat all the same.
  void starting.then((settled) => {
    if ('error' in settled) console.error(`A chat-started ${operation.operationId} failed: ${failureForLog(settled.error)}`);
  });
  const first = await Promise.race([announced.then((id) => ({ id })), starting, after(call.answerBy - services.now(), { late: true as const })]);
  if ('late' in first) {
    // No id yet: a repeat of a command joins the first start and waits for it (or storage is slow).
    return {
      title: 'The operation is still being started: a repeated command joins the first, never starting another.',
      lines: ['`list running` shows it once it is.'],
    };
  }
  const settled = 'id' in first ? await Promise.race([starting, after(call.answerBy - services.now(), undefined)]) : first;
  if (settled && 'error' in settled) throw settled.error;
  if (!settled)
    return {
      title: `Started operation ${(first as { id: string }).id}`,
      facts: [
        ['Operation', operation.operationId],
        ['Service', command.serviceName],
      ],
      lines: [call.endNote],
    };
  const outcome = settled.result.outcome!;
  // Held for approval: stored, nothing sent upstream; the approvers are asked (a platform's onHeldStart).
  const approval = approvalOf(outcome.state);
  if (approval?.state === 'waiting') return waitingReply(outcome.state, approval, call.appBase);
  if (outcome.kind === 'duplicate') return stateReply(outcome.state, 'This operation was already running for you: it was not started again.');
  if (outcome.kind === 'final') return stateReply(outcome.state, 'The upstream answered at once.');
  return { ...stateReply(outcome.state), title: `Started operation ${outcome.state.id}`, lines: [call.endNote] };
}

/** What a usage answer's item holds (Location_ListUsage). */
interface UsageItem {
  name?: { localizedValue?: string; value?: string };
  currentValue?: number;
  limit?: number;
}

async function usage(call: ChatCall, command: Extract<ChatCommand, { kind: 'usage' }>): Promise<ChatReply> {
  const operation = operationOf('Location_ListUsage');
  const timedOut = { timedOut: true } as const;
  const readCall = operationCallOf(call, operation, { subscriptionId: command.subscriptionId, location: command.location });
  const reading = inOperation(operation.operationId, () => runOperation(call.services, readCall)).then(
    (result) => ({ result }),
    // A list answer the pipeline cannot pass on (no `value` array) is told as what it is, below.
    (error: unknown) =>
      readCall.record.upstream?.status === 200 && toGatewayError(error).code === 'UpstreamBadResponse' ? { unreadable: true as const } : Promise.reject(error),
  );
  // A read that fails after the answer was given has no one to tell.
  reading.catch(() => undefined);
  const read = await Promise.race([reading, after(call.answerBy - call.services.now(), timedOut)]);
  if ('timedOut' in read) return { title: 'The upstream did not answer in time; ask again in a moment.' };
  const response = 'result' in read ? read.result.upstream! : undefined;
  if (response && response.status !== 200) return { title: `The upstream answered HTTP ${response.status}.` };
  const page = response ? parseUpstreamJson(response) : undefined;
  if (!isListPage(page)) return { title: 'The upstream answered with a usage list this app cannot read; ask again later, or read it with the usages route.' };
  // Only objects are usages: anything else in the list is left out rather than read.
  const items = page.value.filter((item): item is UsageItem => typeof item === 'object' && item !== null && !Array.isArray(item));
  return {
    title: `Usage in ${command.location}`,
    facts: items
      .slice(0, 10)
      .map((item) => [String(item.name?.localizedValue ?? item.name?.value ?? '?'), `${item.currentValue ?? '?'} of ${item.limit ?? '?'}`]),
    lines: items.length > 10 ? [`${items.length - 10} more not shown.`] : [],
  };
}

async function certificate(call: ChatCall, command: Extract<ChatCommand, { kind: 'cert' }>): Promise<ChatReply> {
  const route = appRoutes.certificatesGet;
  grantFor(call.services, call.caller, actionOf(route));
  // None fetched is a 404 there, and here the message the refusal's words make (failureReply).
  const record = await fetchedCertificate(call.services.certificates.store, Number(command.projectId), command.environmentId);
  const facts: [string, string][] = [];
  if (record.current) facts.push(['Thumbprint', record.current.thumbprint], ['Expires', record.current.expiresAt], ['Subject', record.current.subject]);
  if (record.lastAttempt) facts.push(['Last attempt', `${record.lastAttempt.outcome} at ${record.lastAttempt.at}`]);
  return { title: `Certificate of ${command.projectId}/${command.environmentId}`, facts };
}

export function runUpstreamCommand(call: ChatCall, command: Extract<ChatCommand, { kind: 'migrate' | 'usage' | 'cert' }>): Promise<ChatReply> {
  switch (command.kind) {
    case 'migrate':
      return migrate(call, command);
    case 'usage':
      return usage(call, command);
    case 'cert':
      return certificate(call, command);
  }
}
