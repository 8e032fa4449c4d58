/** Tracing as the app sees it, without loading OpenTelemetry: with tracing off, nothing here costs. */
export interface TraceIds {
  trace_id: string;
  span_id: string;
}

export const SERVER_SPAN_IDS = Symbol('serverSpanIds');
/** The request's server span, where tracing is on: what the app learns of the request later goes on it. */
export const SERVER_SPAN = Symbol('serverSpan');

interface Annotatable {
  setAttributes(attributes: Record<string, string>): unknown;
}

interface TracingHooks {
  activeIds: () => TraceIds | undefined;
  shutdown: () => Promise<void>;
  description: string;
}

let hooks: TracingHooks | undefined;

export function registerTracing(tracing: TracingHooks): void {
  hooks = tracing;
}

export function tracingDescription(): string | undefined {
  return hooks?.description;
}

export function serverSpanIdsOf(req: object): TraceIds | undefined {
  return (req as { [SERVER_SPAN_IDS]?: TraceIds })[SERVER_SPAN_IDS];
}

export function annotateServerSpan(req: object, attributes: Record<string, string>): void {
  (req as { [SERVER_SPAN]?: Annotatable })[SERVER_SPAN]?.setAttributes(attributes);
}

export function activeTraceIds(): TraceIds | undefined {
  return hooks?.activeIds();
}

export async function shutdownTracing(): Promise<void> {
  const current = hooks;
  hooks = undefined;
  await current?.shutdown();
}
