import { randomBytes } from 'node:crypto';
import { AUTH, TEST_KEY, testDatabaseEnv } from './support/app';
import { TestIssuer } from './support/oidc-issuer';
import { OtlpReceiver, ReceivedSpan, SPAN_KIND } from './support/otlp';
import { RunningService, spawnService, stopService } from './support/process';

/** A query parameter that looks like a credential: it must reach neither spans nor logs. */
const QUERY_SECRET = 'query-secret-0123456789abcdef';

function hex(bytes: number): string {
  return randomBytes(bytes).toString('hex');
}

/** The JSON log line of the request to this URL. */
function logLineOf(service: RunningService, url: string): Record<string, unknown> {
  const line = service
    .output()
    .split('\n')
    .filter((text) => text.startsWith('{'))
    .map((text) => JSON.parse(text) as Record<string, unknown>)
    .find((entry) => typeof entry.url === 'string' && entry.url.startsWith(url));
  if (!line) throw new Error(`no log line for ${url} in:\n${service.output()}`);
  return line;
}

async function createPet(service: RunningService): Promise<number> {
  const response = await fetch(`${service.url}/v1/pets`, {
    method: 'POST',
    headers: { ...AUTH, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'Traced', categoryId: 3 }),
  });
  expect(response.status).toBe(201);
  return ((await response.json()) as { id: number }).id;
}

/** Whether `span` descends from `ancestor` through the spans received. */
function descendsFrom(span: ReceivedSpan, ancestor: ReceivedSpan, spans: ReceivedSpan[]): boolean {
  let current: ReceivedSpan | undefined = span;
  for (let depth = 0; current && depth < 20; depth++) {
    if (current.parentSpanId === ancestor.spanId) return true;
    const parentId: string = current.parentSpanId;
    current = spans.find((candidate) => candidate.spanId === parentId);
  }
  return false;
}

describe.each(['http/protobuf', 'http/json'])('tracing with OTLP over %s', (protocol) => {
  let receiver: OtlpReceiver;
  let issuer: TestIssuer;
  let service: RunningService;

  beforeAll(async () => {
    receiver = await OtlpReceiver.start();
    issuer = await TestIssuer.start();
    service = await spawnService(
      {
        API_KEYS: TEST_KEY,
        OIDC_ISSUER: issuer.url,
        OIDC_AUDIENCE: issuer.audience,
        NODE_ENV: 'production',
        LOG_LEVEL: 'info',
        ...testDatabaseEnv(),
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
        OTEL_BSP_SCHEDULE_DELAY: '100',
      },
      60000,
    );
  }, 90000);

  afterAll(async () => {
    if (service) await stopService(service);
    await receiver?.close();
    await issuer?.stop();
  });

  it("continues the caller's trace: a server span with route and status, a database span below it, ids in the log line", async () => {
    const id = await createPet(service);
    const traceId = hex(16);
    const callerSpanId = hex(8);
    const path = `/v1/pets/${id}?api_key=${QUERY_SECRET}`;
    const response = await fetch(`${service.url}${path}`, {
      headers: { ...AUTH, traceparent: `00-${traceId}-${callerSpanId}-01` },
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ id, name: 'Traced', categoryId: 3 });
    expect([...response.headers.values()].join('\n')).not.toContain(traceId);

    const inTrace = () => receiver.spans.filter((span) => span.traceId === traceId);
    await receiver.waitFor(
      () =>
        inTrace().some((span) => span.kind === SPAN_KIND.SERVER) &&
        inTrace().some((span) => span.attributes['db.query.text'] !== undefined),
    );
    const spans = inTrace();
    const server = spans.find((span) => span.kind === SPAN_KIND.SERVER)!;
    expect(server).toMatchObject({
      parentSpanId: callerSpanId,
      name: 'GET /v1/pets/:petId',
      attributes: expect.objectContaining({
        'http.request.method': 'GET',
        'http.route': '/v1/pets/:petId',
        'http.response.status_code': 200,
        'url.path': `/v1/pets/${id}`,
        'url.query': 'api_key=[Redacted]',
      }),
      resource: expect.objectContaining({ 'service.name': 'petstore-api' }),
    });
    const database = spans.find((span) => span.attributes['db.query.text'] !== undefined)!;
    expect(database.kind).toBe(SPAN_KIND.CLIENT);
    expect(['sqlite', 'postgresql']).toContain(database.attributes['db.system.name']);
    expect(database.attributes['db.query.text']).toMatch(/^SELECT .* FROM "(pets|\w+"\."pets)"/);
    expect(descendsFrom(database, server, spans)).toBe(true);
    expect([...receiver.contentTypes]).toEqual([
      protocol === 'http/json' ? 'application/json' : 'application/x-protobuf',
    ]);

    expect(logLineOf(service, `/v1/pets/${id}?`)).toMatchObject({
      status: 200,
      trace_id: traceId,
      span_id: server.spanId,
    });
  });

  it("names an access token's subject on the server span (enduser.id) and the log line, never the token", async () => {
    const token = await issuer.token({ sub: 'svc-traced', client_id: 'tracer' });
    const traceId = hex(16);
    const response = await fetch(`${service.url}/v1/pets?limit=2`, {
      headers: { Authorization: `Bearer ${token}`, traceparent: `00-${traceId}-${hex(8)}-01` },
    });
    expect(response.status).toBe(200);
    await receiver.waitFor((spans) =>
      spans.some((span) => span.traceId === traceId && span.kind === SPAN_KIND.SERVER),
    );
    const server = receiver.spans.find((span) => span.traceId === traceId && span.kind === SPAN_KIND.SERVER)!;
    expect(server.attributes['enduser.id']).toBe('svc-traced');
    expect(logLineOf(service, '/v1/pets?limit=2')).toMatchObject({
      subject: 'svc-traced',
      clientId: 'tracer',
    });
    expect(Buffer.concat(receiver.bodies).toString('latin1')).not.toContain(token.split('.')[2]);
  });

  it('sends no API key, no query secret and no body in any span', async () => {
    const response = await fetch(`${service.url}/v1/pets?token=${QUERY_SECRET}`, {
      method: 'POST',
      headers: { ...AUTH, 'Content-Type': 'application/json', Cookie: `session=${QUERY_SECRET}` },
      body: JSON.stringify({ name: 'Body-secret-name', categoryId: 4 }),
    });
    expect(response.status).toBe(201);
    await receiver.waitFor((spans) =>
      spans.some(
        (span) => span.kind === SPAN_KIND.SERVER && span.attributes['http.request.method'] === 'POST',
      ),
    );
    // Every export so far, in its raw form.
    const everything = Buffer.concat(receiver.bodies).toString('latin1');
    expect(everything).not.toContain(TEST_KEY);
    expect(everything).not.toContain(QUERY_SECRET);
    expect(everything).not.toContain('Body-secret-name');
    expect(JSON.stringify(receiver.spans)).not.toMatch(/authorization|cookie/i);
  });
});

describe('tracing off (no OTEL_* variables)', () => {
  let service: RunningService;

  beforeAll(async () => {
    service = await spawnService(
      { API_KEYS: TEST_KEY, NODE_ENV: 'production', LOG_LEVEL: 'info', ...testDatabaseEnv() },
      60000,
    );
  }, 90000);

  afterAll(async () => {
    if (service) await stopService(service);
  });

  it('starts no tracing, and log lines carry no trace ids even for a caller that sends traceparent', async () => {
    const response = await fetch(`${service.url}/v1/pets?limit=1`, {
      headers: { ...AUTH, traceparent: `00-${hex(16)}-${hex(8)}-01` },
    });
    expect(response.status).toBe(200);
    expect(service.output()).not.toContain('Tracing:');
    await new Promise((resolve) => setTimeout(resolve, 100));
    const line = logLineOf(service, '/v1/pets?limit=1');
    expect(line).toMatchObject({ status: 200, route: '/v1/pets' });
    expect(line).not.toHaveProperty('trace_id');
    expect(line).not.toHaveProperty('span_id');
  });
});
