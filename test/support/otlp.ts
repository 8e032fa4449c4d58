import { once } from 'node:events';
import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as protobuf from 'protobufjs';

/**
 * The part of the OTLP trace protocol (opentelemetry-proto, v1: collector/trace/v1,
 * trace/v1, common/v1, resource/v1) that the tests read, with the official field numbers.
 * Fields left out are skipped by the decoder, as protobuf readers do with unknown fields.
 */
const OTLP_TRACE_PROTO = `
syntax = "proto3";
package otlp;
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; string schema_url = 3; }
message Resource { repeated KeyValue attributes = 1; }
message ScopeSpans { InstrumentationScope scope = 1; repeated Span spans = 2; string schema_url = 3; }
message InstrumentationScope { string name = 1; string version = 2; }
message Span {
  bytes trace_id = 1;
  bytes span_id = 2;
  string trace_state = 3;
  bytes parent_span_id = 4;
  string name = 5;
  int32 kind = 6;
  fixed64 start_time_unix_nano = 7;
  fixed64 end_time_unix_nano = 8;
  repeated KeyValue attributes = 9;
  Status status = 15;
}
message Status { string message = 2; int32 code = 3; }
message KeyValue { string key = 1; AnyValue value = 2; }
message AnyValue {
  oneof value {
    string string_value = 1;
    bool bool_value = 2;
    int64 int_value = 3;
    double double_value = 4;
    ArrayValue array_value = 5;
    bytes bytes_value = 7;
  }
}
message ArrayValue { repeated AnyValue values = 1; }
`;

const ExportTraceServiceRequest = protobuf
  .parse(OTLP_TRACE_PROTO, { keepCase: false })
  .root.lookupType('otlp.ExportTraceServiceRequest');

/** SpanKind as OTLP numbers it. */
export const SPAN_KIND = { INTERNAL: 1, SERVER: 2, CLIENT: 3 } as const;

export type AttributeValue = string | number | boolean | AttributeValue[];

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** '' for a root span. */
  parentSpanId: string;
  name: string;
  kind: number;
  scope: string;
  attributes: Record<string, AttributeValue>;
  resource: Record<string, AttributeValue>;
}

interface AnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: number | string;
  doubleValue?: number;
  arrayValue?: { values?: AnyValue[] };
  bytesValue?: string;
}

interface KeyValue {
  key: string;
  value?: AnyValue;
}

/** The request as OTLP/JSON writes it, and as the protobuf decoder gives it (ids as hex, longs as numbers). */
interface ExportRequest {
  resourceSpans?: {
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: {
      scope?: { name?: string };
      spans?: {
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind?: number;
        attributes?: KeyValue[];
      }[];
    }[];
  }[];
}

function valueOf(value: AnyValue | undefined): AttributeValue {
  if (value === undefined) return '';
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(valueOf);
  return value.bytesValue ?? '';
}

function attributesOf(list: KeyValue[] | undefined): Record<string, AttributeValue> {
  return Object.fromEntries((list ?? []).map(({ key, value }) => [key, valueOf(value)]));
}

function spansOf(request: ExportRequest): ReceivedSpan[] {
  return (request.resourceSpans ?? []).flatMap((resourceSpans) =>
    (resourceSpans.scopeSpans ?? []).flatMap((scopeSpans) =>
      (scopeSpans.spans ?? []).map((span) => ({
        traceId: span.traceId,
        spanId: span.spanId,
        parentSpanId: span.parentSpanId ?? '',
        name: span.name,
        kind: span.kind ?? 0,
        scope: scopeSpans.scope?.name ?? '',
        attributes: attributesOf(span.attributes),
        resource: attributesOf(resourceSpans.resource?.attributes),
      })),
    ),
  );
}

/** Decodes an OTLP/HTTP trace export in either encoding. */
export function decodeTraceExport(contentType: string, body: Buffer): ReceivedSpan[] {
  if (contentType.startsWith('application/json')) return spansOf(JSON.parse(body.toString('utf8')));
  if (!contentType.startsWith('application/x-protobuf'))
    throw new Error(`unexpected content type ${contentType}`);
  const message = ExportTraceServiceRequest.decode(body);
  const decoded = ExportTraceServiceRequest.toObject(message, {
    longs: Number,
    bytes: String,
    defaults: false,
  });
  const hex = (base64: unknown) =>
    typeof base64 === 'string' ? Buffer.from(base64, 'base64').toString('hex') : '';
  for (const resourceSpans of (decoded as ExportRequest).resourceSpans ?? []) {
    for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
      for (const span of scopeSpans.spans ?? []) {
        span.traceId = hex(span.traceId);
        span.spanId = hex(span.spanId);
        span.parentSpanId = hex(span.parentSpanId);
      }
    }
  }
  return spansOf(decoded);
}

/** An OTLP/HTTP receiver for traces on 127.0.0.1: what the OpenTelemetry Collector would get. */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  readonly contentTypes = new Set<string>();
  /** Raw bodies, to check that no secret went out in any form. */
  readonly bodies: Buffer[] = [];
  private constructor(private readonly server: Server) {}

  static async start(): Promise<OtlpReceiver> {
    const server = createServer();
    const receiver = new OtlpReceiver(server);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const contentType = req.headers['content-type'] ?? '';
        const body = Buffer.concat(chunks);
        if (req.method !== 'POST' || req.url !== '/v1/traces') {
          res.writeHead(404).end();
          return;
        }
        receiver.contentTypes.add(contentType);
        receiver.bodies.push(body);
        receiver.spans.push(...decodeTraceExport(contentType, body));
        res.writeHead(200, { 'Content-Type': contentType }).end(contentType.includes('json') ? '{}' : '');
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Waits until the spans received satisfy `done`. */
  async waitFor(done: (spans: ReceivedSpan[]) => boolean, timeoutMs = 20000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!done(this.spans)) {
      if (Date.now() > deadline) {
        throw new Error(
          `spans not received in ${timeoutMs} ms; got: ${this.spans.map((s) => s.name).join(', ')}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
