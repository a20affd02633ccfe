/** A W3C trace context as stored (with a long-running start) or sent: `traceparent` and `tracestate`. */
export interface TraceCarrier {
  traceparent: string;
  tracestate?: string;
}

/** A carrier of `traceparent`, with `tracestate` only when there is one. */
export function carrierOf(traceparent: string, tracestate: string | null | undefined): TraceCarrier {
  return tracestate ? { traceparent, tracestate } : { traceparent };
}
