/**
 * The app's registrations as the host reads them: its HTTP routes in ASP.NET's precedence
 * (overlapping ones refused unless precedence and their function names order them alike, since
 * the real host tries them by function name) and its timers (each schedule read as
 * the host reads it), and one invocation through the programming model, as the Node worker
 * makes it.
 */
import { randomUUID } from 'node:crypto';
import { getProgrammingModel, log, type BindingInfo, type RegisteredFunction } from './coreApi';
import { comparePrecedence, parseRouteTemplate, routesOverlap, type RouteTemplate } from './routeTemplate';
import { timerScheduleOf } from './scheduledRuns';
import type { TimerSchedule } from '../../src/settings';

export interface HttpRoute {
  fn: RegisteredFunction;
  triggerName: string;
  template: RouteTemplate;
  methods: Set<string>;
  authLevel: string;
}

export interface TimerFunction {
  fn: RegisteredFunction;
  triggerName: string;
  schedule: TimerSchedule;
  runOnStartup: boolean;
}

export const allMethods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'TRACE'];

function triggerOf(fn: RegisteredFunction): [string, BindingInfo] {
  const entry = Object.entries(fn.metadata.bindings).find(([, binding]) => binding.direction === 'in' && /Trigger$/i.test(binding.type));
  if (!entry) throw new Error(`Function "${fn.metadata.name}" has no trigger binding.`);
  return entry;
}

/** Whether precedence puts one route first and the function names sort the same way. */
function orderedAlike(first: HttpRoute, second: HttpRoute): boolean {
  const byPrecedence = comparePrecedence(first.template, second.template);
  const byName = first.fn.metadata.name.toLowerCase().localeCompare(second.fn.metadata.name.toLowerCase(), 'en');
  return byPrecedence !== 0 && Math.sign(byPrecedence) === Math.sign(byName);
}

export function collectHttpRoutes(functions: readonly RegisteredFunction[]): HttpRoute[] {
  const routes = functions
    .map((fn) => ({ fn, trigger: triggerOf(fn) }))
    .filter(({ trigger }) => trigger[1].type.toLowerCase() === 'httptrigger')
    .map(({ fn, trigger: [triggerName, binding] }) => ({
      fn,
      triggerName,
      template: parseRouteTemplate(binding.route ?? fn.metadata.name),
      methods: new Set((binding.methods ?? allMethods).map((method) => method.toUpperCase())),
      authLevel: String(binding.authLevel ?? 'function').toLowerCase(),
    }));
  const clashes: string[] = [];
  for (const [index, first] of routes.entries()) {
    for (const second of routes.slice(index + 1)) {
      const sharedMethods = [...first.methods].filter((method) => second.methods.has(method));
      // Two routes may overlap only when ASP.NET's precedence orders them (a literal segment
      // before a parameter) and their function names sort the same way: the real host tries
      // overlapping routes in function-name order (azure-functions-host#9876), so either rule
      // then picks the same route.
      if (sharedMethods.length > 0 && !orderedAlike(first, second) && routesOverlap(first.template, second.template)) {
        clashes.push(
          `"${first.fn.metadata.name}" (${first.template.template}) and "${second.fn.metadata.name}" (${second.template.template}) both match some ${sharedMethods.join('/')} request`,
        );
      }
    }
  }
  if (clashes.length > 0) {
    throw new Error(
      `Overlapping routes that precedence and function names do not order alike; the real host would pick between them by function name:\n  ${clashes.join('\n  ')}`,
    );
  }
  return routes.sort((first, second) => comparePrecedence(first.template, second.template));
}

/** The timer functions, each schedule read as the host reads it: one the host refuses stops the start. */
export function collectTimers(functions: readonly RegisteredFunction[]): TimerFunction[] {
  return functions
    .map((fn) => ({ fn, trigger: triggerOf(fn) }))
    .filter(({ trigger }) => trigger[1].type.toLowerCase() === 'timertrigger')
    .map(({ fn, trigger: [triggerName, binding] }) => ({
      fn,
      triggerName,
      schedule: timerScheduleOf(fn.metadata.name, String(binding.schedule)),
      runOnStartup: binding.runOnStartup === true,
    }));
}

/**
 * Runs one invocation through the programming model, as the worker does. `callerGone` becomes
 * the HTTP request's `signal` (a Fetch request's name for it), aborted when the caller hangs up,
 * so a held answer (`gateway-wait`) can end then. `traceContext` is the caller's W3C trace
 * context, which the host hands the invocation as the worker's `context.traceContext`.
 */
export async function invoke(
  fn: RegisteredFunction,
  triggerName: string,
  data: Record<string, unknown>,
  callerGone?: AbortSignal,
  traceContext?: { traceParent: string; traceState?: string },
): Promise<unknown> {
  const model = getProgrammingModel();
  if (!model) throw new Error('No programming model was registered: was @azure/functions loaded through this host?');
  const invocationId = randomUUID();
  const coreContext = {
    invocationId,
    metadata: fn.metadata,
    request: { invocationId, functionId: fn.metadata.name, inputData: [{ name: triggerName, data }], triggerMetadata: {}, traceContext },
    state: undefined,
    log: (level: string, category: string, message: string) => log(level, category, message),
  };
  const invocation = model.getInvocationModel(coreContext);
  const { context, inputs } = await invocation.getArguments();
  if (callerGone && typeof inputs[0] === 'object' && inputs[0] !== null) Object.defineProperty(inputs[0], 'signal', { value: callerGone });
  const result = await invocation.invokeFunction(context, inputs, fn.callback);
  const response = await invocation.getResponse(context, result);
  return response.returnValue;
}
