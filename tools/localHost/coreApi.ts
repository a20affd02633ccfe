/**
 * The module `@azure/functions-core` as the Node worker provides it to `@azure/functions`:
 * the library hands it its programming model and every registration,
 * exactly as the real host would receive them. The local host reads them from here.
 */

export interface BindingInfo {
  type: string;
  direction: 'in' | 'out';
  name?: string;
  route?: string;
  methods?: string[];
  authLevel?: string;
  schedule?: string;
  runOnStartup?: boolean;
  [field: string]: unknown;
}

export interface FunctionMetadata {
  name: string;
  bindings: Record<string, BindingInfo>;
}

export type FunctionCallback = (...args: unknown[]) => unknown;

export interface RegisteredFunction {
  metadata: FunctionMetadata;
  callback: FunctionCallback;
}

/** What the worker asks of the programming model, per invocation. */
export interface InvocationModel {
  getArguments(): Promise<{ context: unknown; inputs: unknown[] }>;
  invokeFunction(context: unknown, inputs: unknown[], handler: FunctionCallback): Promise<unknown>;
  getResponse(context: unknown, result: unknown): Promise<{ invocationId: string; returnValue?: unknown; outputData?: unknown[] }>;
}

export interface ProgrammingModel {
  name: string;
  version: string;
  getInvocationModel(coreContext: unknown): InvocationModel;
  getCapabilities?(capabilities: Record<string, string>): Promise<Record<string, string>>;
}

export type LogSink = (level: string, category: string, message: string) => void;

export class Disposable {
  constructor(private readonly callback: () => void) {}
  dispose(): void {
    this.callback();
  }
}

/**
 * Log lines are gathered and written once per turn of the event loop: a write per line cost
 * the local host a fifth of its time under load (the real host ships logs asynchronously too).
 */
function bufferedWriter(stream: NodeJS.WriteStream): (line: string) => void {
  let pending: string[] = [];
  const flush = () => {
    if (pending.length === 0) return;
    const text = `${pending.join('\n')}\n`;
    pending = [];
    stream.write(text);
  };
  process.once('exit', flush);
  return (line) => {
    if (pending.length === 0) setImmediate(flush);
    pending.push(line);
  };
}

const writeOut = bufferedWriter(process.stdout);
const writeError = bufferedWriter(process.stderr);

const registry = {
  programmingModel: undefined as ProgrammingModel | undefined,
  functions: [] as RegisteredFunction[],
  hooks: new Map<string, Set<(context: unknown) => unknown>>(),
  // One format for the terminal whoever logs: the app's console lines are the message alone, so
  // an information line of context.log or of the host is too; other levels say theirs.
  logSink: ((level: string, _category: string, message: string) => {
    const line = level === 'information' ? message : `[${level}] ${message}`;
    if (level === 'error' || level === 'critical') writeError(line);
    else writeOut(line);
  }) as LogSink,
};

export const version = '3.10.1';

export function setProgrammingModel(model: ProgrammingModel): void {
  registry.programmingModel = model;
}

export function getProgrammingModel(): ProgrammingModel | undefined {
  return registry.programmingModel;
}

export function registerFunction(metadata: FunctionMetadata, callback: FunctionCallback): Disposable {
  if (registry.functions.some((entry) => entry.metadata.name.toLowerCase() === metadata.name.toLowerCase())) {
    // The real worker refuses a duplicate name too.
    throw new Error(`A function with the name "${metadata.name}" has already been registered.`);
  }
  const entry = { metadata, callback };
  registry.functions.push(entry);
  return new Disposable(() => registry.functions.splice(registry.functions.indexOf(entry), 1));
}

export function registerHook(hookName: string, callback: (context: unknown) => unknown): Disposable {
  const hooks = registry.hooks.get(hookName) ?? new Set();
  hooks.add(callback);
  registry.hooks.set(hookName, hooks);
  return new Disposable(() => hooks.delete(callback));
}

export function log(level: string, category: string, message: string): void {
  registry.logSink(level, category, message);
}

/** For the local host: everything registered so far. */
export function registeredFunctions(): readonly RegisteredFunction[] {
  return registry.functions;
}

export function hooksFor(hookName: string): ((context: unknown) => unknown)[] {
  return [...(registry.hooks.get(hookName) ?? [])];
}

export function setLogSink(sink: LogSink): void {
  registry.logSink = sink;
}
