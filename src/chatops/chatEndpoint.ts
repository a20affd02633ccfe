/**
 * What the chat routes share: the route is off until its platform is configured, the body is
 * read within its bound, the signature and its freshness are checked before anything else, the
 * command runs as the chat user's caller and always ends in a message (a refusal, a usage
 * message, a failure's correlation id: never a 500), and the call leaves the usual call record.
 */
import type { HttpHandler, HttpRequest } from '@azure/functions';
import { GatewayError, toGatewayError } from '../errors';
import { appBaseOf } from '../http';
import { refusalCodes } from '../calls';
import { framed, type FramedCall, type ServicesSource } from '../http';
import { correlationHeader } from '../rules';
import { bodyBytesOf } from '../http';
import { failureForLog } from '../rules';
import { jsonResponse } from '../calls';
import type { Services } from '../services';
import { after, type ChatCall } from './chatCall';
import { usageReply, type ChatReply } from './chatMessages';
import type { ChatPlatformHandler, SignedChatRequests } from './chatPlatform';
import { chatEnabled } from './chatSettings';
import { commandUsage, parseCommand, type ChatCommand } from './commandGrammar';
import { runApprovalCommand } from './approvalCommands';
import { runOrchestrationCommand } from './orchestrationCommands';
import { firstUseAppWide, uncheckedReply } from './chatReplays';
import { ReplayCache } from './requestSignatures';
import { runUpstreamCommand } from './upstreamCommands';

const replayCaches = new Map<string, ReplayCache>();

function replayCacheOf(services: Services, platform: string): ReplayCache {
  const { CHATOPS_REPLAY_CACHE_SIZE, CHATOPS_TIMESTAMP_TOLERANCE_SECONDS } = services.config;
  // A signature stays refusable as long as its timestamp could pass: the tolerance either side of now.
  let cache = replayCaches.get(platform);
  if (!cache) replayCaches.set(platform, (cache = new ReplayCache(CHATOPS_REPLAY_CACHE_SIZE, 2 * CHATOPS_TIMESTAMP_TOLERANCE_SECONDS * 1000)));
  return cache;
}

async function boundedBody(request: HttpRequest, maxBytes: number): Promise<Buffer> {
  const declared = Number(request.headers.get('content-length') ?? '0');
  const tooLarge = () => new GatewayError('PayloadTooLarge', `A chat request is at most ${maxBytes} bytes (CHATOPS_MAX_BODY_BYTES).`);
  if (declared > maxBytes) throw tooLarge();
  const bytes = await bodyBytesOf(request);
  if (bytes.byteLength > maxBytes) throw tooLarge();
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

const verdictMessages = {
  missing: 'The request is not signed as the chat platform signs it.',
  stale: 'The request is signed at a time too far from now; it is refused.',
  mismatch: 'The request signature does not match.',
  replayed: 'This signed request was received already; it is refused.',
};

function runCommand(call: ChatCall, command: ChatCommand): Promise<ChatReply> {
  switch (command.kind) {
    case 'help':
      return Promise.resolve({ title: 'Commands this app takes:', lines: commandUsage.slice(1) });
    case 'status':
    case 'wait':
    case 'terminate':
    case 'list':
      return runOrchestrationCommand(call, command);
    case 'approve':
    case 'reject':
      return runApprovalCommand(call, command, 'chat-command');
    default:
      return runUpstreamCommand(call, command);
  }
}

/**
 * How long before the platform's budget (SLACK_ACK_BUDGET_MS, TEAMS_ACK_BUDGET_MS) a command aims
 * to answer (its `answerBy`). Each command answers by `answerBy` itself where it waits on something
 * slow (a start, an upstream read, a wait); the net under the rest (a storage read that stalls)
 * answers for it at the budget itself, never later, so the user sees a message rather than the
 * platform's timeout.
 */
const lateMarginMs = 100;

function lateReply(call: ChatCall): ChatReply {
  return {
    title: 'The command is still running: the app could not finish it in the time the chat waits (its storage or upstream is slow).',
    lines: ['Ask again in a moment; a `terminate` may still take effect, and `status <id>` shows it.', `Correlation id: ${call.correlationId}`],
  };
}

/** The command's reply, or, past the answer's time, a message saying it is still running. */
async function answeredInTime(call: ChatCall, running: Promise<ChatReply>): Promise<ChatReply> {
  let answered = false;
  // What fails after the answer was given has no one to tell but the process log (the invocation is over).
  running.catch((thrown: unknown) => {
    if (answered && toGatewayError(thrown).status >= 500) console.error(`A chat command failed after its answer: ${failureForLog(thrown)}`);
  });
  const reply = await Promise.race([running, after(call.answerBy + lateMarginMs - call.services.now(), undefined)]);
  answered = true;
  return reply ?? lateReply(call);
}

/** A refusal or failure as a message: the refusal's own words, else a failure naming its correlation id. */
function failureReply(thrown: unknown, call: Pick<ChatCall, 'correlationId' | 'caller'>, log: (line: string) => void): ChatReply {
  const error = toGatewayError(thrown);
  if (error.status >= 500) {
    if (error.code === 'InternalError') log(`A chat command failed: ${failureForLog(thrown)}`);
    return { title: 'The command failed.', lines: [error.code === 'InternalError' ? 'Try again.' : error.message, `Correlation id: ${call.correlationId}`] };
  }
  const hint =
    error.code === 'OperationNotAllowed' || error.code === 'ScopeNotAllowed' ? [`Your rights are those ACCESS_POLICY gives ${call.caller.primary}.`] : [];
  return { title: error.message, lines: hint };
}

/**
 * What a verified chat request is answered, always a message: that the user has no rights yet (no
 * rule names it), else what `run` answers by the call's time, or its refusal or failure in words.
 * The call record says what the policy decided.
 */
export async function answerChat(call: ChatCall, record: FramedCall['record'], run: () => Promise<ChatReply>): Promise<ChatReply> {
  const { services, caller } = call;
  if (!services.access.policy.names(caller.primary)) {
    record.decision = 'OperationNotAllowed';
    return { title: 'You have no rights in this app yet.', lines: [`Ask its operators to name \`${caller.primary}\` in ACCESS_POLICY.`] };
  }
  try {
    const reply = await answeredInTime(call, run());
    record.decision = 'allowed';
    return reply;
  } catch (thrown) {
    const code = toGatewayError(thrown).code;
    record.decision = refusalCodes.has(code) ? code : 'allowed';
    return failureReply(thrown, call, call.log);
  }
}

/** A signed request past the checks: the platform's route check, not taken (storage could not say), or taken once, to be answered by `answerBy`. */
export type Admission<Read> = { kind: 'check' } | { kind: 'unchecked'; chat: Read } | { kind: 'first'; chat: Read; answerBy: number };

/**
 * The checks every chat route makes, in this order, before it runs anything a request asks: the
 * route is on, the body within its bound, the signature and its time good, the request readable,
 * and its signature not seen before by this instance nor (chatReplays.ts) by the app.
 */
export async function admitChatRequest<Read extends { signedAtMs: number }>(
  services: Services,
  platform: SignedChatRequests<Read>,
  request: HttpRequest,
  startedMs: number,
  log: (line: string) => void,
): Promise<Admission<Read>> {
  const { config } = services;
  if (!chatEnabled(config, platform.platform)) throw new GatewayError('NotFound', 'Not found.');
  const body = await boundedBody(request, config.CHATOPS_MAX_BODY_BYTES);
  const verdict = platform.verify(services, request, body);
  if (!verdict.ok) throw new GatewayError('Unauthorized', verdictMessages[verdict.reason]);
  if (platform.isCheck?.(body)) return { kind: 'check' };
  const chat = platform.read(services, request, body);
  // Counted only once the whole request proved itself: a forged one cannot evict real ones.
  if (!replayCacheOf(services, platform.platform.name).firstUse(verdict.signature, services.now()))
    throw new GatewayError('Unauthorized', verdictMessages.replayed);
  // Then app-wide (chatReplays.ts): one conditional create, refused when another instance took it.
  const answerBy = startedMs + platform.answerBudgetMs(services) - lateMarginMs;
  const use = await firstUseAppWide(services, { platform: platform.platform.name, signature: verdict.signature, signedAtMs: chat.signedAtMs }, answerBy, log);
  if (use === 'replayed') throw new GatewayError('Unauthorized', verdictMessages.replayed);
  return use === 'unchecked' ? { kind: 'unchecked', chat } : { kind: 'first', chat, answerBy };
}

/**
 * A platform's route, traced as the app's other routes are: its span (the command's upstream
 * calls and storage calls within it, and the start's context stored for its polls and its end's post).
 */
export function chatRoute(platform: ChatPlatformHandler): (getServices: ServicesSource) => HttpHandler {
  return (getServices) =>
    framed(
      `chatops-${platform.platform.name}`,
      getServices,
      async ({ request, context, services, correlationId, startedMs, record }) => {
        const { config } = services;
        const admission = await admitChatRequest(services, platform, request, startedMs, (line) => context.error(line));
        if (admission.kind === 'check') return { status: 200, headers: { [correlationHeader]: correlationId } };
        const { chat } = admission;
        const caller = (record.caller = chat.caller);
        if (admission.kind === 'unchecked') return jsonResponse(200, platform.render(uncheckedReply(correlationId)), correlationId);
        const { answerBy } = admission;
        const call: ChatCall = {
          services,
          caller,
          correlationId,
          appBase: appBaseOf(request.url, `chatops/${platform.platform.name}`, config.APP_PUBLIC_URL),
          answerBy,
          endTarget: chat.endTarget,
          endNote: chat.endNote,
          log: (line) => context.error(line),
        };
        const reply = await answerChat(call, record, () => {
          const parsed = parseCommand(chat.text, config.CHATOPS_MAX_COMMAND_CHARS);
          return parsed.ok ? runCommand(call, parsed.command) : Promise.resolve(usageReply(parsed.problem, commandUsage));
        });
        return jsonResponse(200, platform.render(reply), correlationId);
      },
      { chatUser: true },
    );
}
