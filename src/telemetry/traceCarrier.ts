/** A W3C trace context as stored (with a long-running start) or sent: `traceparent` and `tracestate`. */
export interface TraceCarrier {
  traceparent: string;
  tracestate?: string;
}
