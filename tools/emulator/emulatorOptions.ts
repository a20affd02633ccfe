/** What the emulator is started with, and what its routes answer: shared by the server (emulatorServer.ts) and its routes. */

export interface EmulatorOptions {
  providerNamespace?: string;
  /** The bearer token it accepts. */
  token?: string;
  /** More tokens it accepts (a caller's refreshed token, say). */
  otherTokens?: string[];
  /** Status reads before a long-running operation ends. */
  lroSteps?: number;
  /** Retry-After it asks for, in seconds. */
  retryAfterSeconds?: number;
  /** Items and page size of the generated lists. */
  listItems?: number;
  pageSize?: number;
  /** Certificate downloads allowed per environment per window. */
  certificateWindowMs?: number;
  /** Added before every upstream answer, to model a distant service. */
  latencyMs?: number;
  /** When set, a long-running operation ends this long after it starts, whatever is read. */
  lroDurationMs?: number;
  /** Share of upstream requests (0–1) answered with a random fault: 429, 503, a reset or a slow answer. */
  chaosRate?: number;
  random?: () => number;
  now?: () => number;
  port?: number;
}

export interface Reply {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
}
