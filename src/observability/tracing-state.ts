/**
 * What the rest of the app needs to know about tracing, without loading OpenTelemetry: the
 * tracing bootstrap (`tracing.ts`) fills it in when tracing is on. With tracing off every
 * function here returns at once, so the request log and the logger pay nothing for it.
 */

/** A span's ids as log lines carry them. */
export interface TraceIds {
  trace_id: string;
  span_id: string;
}

/** Where the server span's ids are kept on the request, by the HTTP instrumentation's hook. */
export const SERVER_SPAN_IDS = Symbol('serverSpanIds');

interface TracingHooks {
  /** The ids of the span active in the current context, if any. */
  activeIds: () => TraceIds | undefined;
  /** Exports the spans still buffered and stops the SDK. */
  shutdown: () => Promise<void>;
  /** One line for the start-up banner: where spans go. */
  description: string;
}

let hooks: TracingHooks | undefined;

export function registerTracing(tracing: TracingHooks): void {
  hooks = tracing;
}

export function tracingEnabled(): boolean {
  return hooks !== undefined;
}

export function tracingDescription(): string | undefined {
  return hooks?.description;
}

/** The ids of the server span of this request (tracing on), else undefined. */
export function serverSpanIdsOf(req: object): TraceIds | undefined {
  return (req as { [SERVER_SPAN_IDS]?: TraceIds })[SERVER_SPAN_IDS];
}

/** The ids of the span active where this is called (tracing on), else undefined. */
export function activeTraceIds(): TraceIds | undefined {
  return hooks?.activeIds();
}

export async function shutdownTracing(): Promise<void> {
  const current = hooks;
  hooks = undefined;
  await current?.shutdown();
}
