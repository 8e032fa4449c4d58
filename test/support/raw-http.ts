import { Agent, request, Server } from 'node:http';
import { AddressInfo, connect } from 'node:net';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { TEST_KEY } from './app';

/** One HTTP response as it came off the wire. Header names are lower-case; repeated ones keep every value. */
export interface RawResponse {
  status: number;
  headers: Record<string, string[]>;
  body: string;
}

export interface RawExchange {
  responses: RawResponse[];
  /** Whether the server closed the connection (rather than the client timing out). */
  closed: boolean;
  /** Everything the server sent, as latin1 text. */
  raw: string;
}

export interface ExchangeOptions {
  /** Give up waiting for the server after this long. */
  timeoutMs?: number;
  /** Wait this long between the parts of the payload. */
  pauseMs?: number;
}

/** The port a started app listens on (`app.listen(0, '127.0.0.1')` first). */
export function portOf(app: NestExpressApplication): number {
  return (app.getHttpServer().address() as AddressInfo).port;
}

/**
 * Listens on a free port of 127.0.0.1 with short request timers instead of Node's 60 s (headers)
 * and 300 s (whole request), so that a test sees the 408 of a stalled request soon.
 */
export async function listenWithTimeouts(app: NestExpressApplication, timeoutMs: number): Promise<number> {
  const server = app.getHttpServer() as Server & { connectionsCheckingInterval: number };
  server.headersTimeout = timeoutMs;
  server.requestTimeout = timeoutMs;
  server.connectionsCheckingInterval = Math.min(250, timeoutMs / 4);
  await app.listen(0, '127.0.0.1');
  return portOf(app);
}

/**
 * Sends bytes over a fresh TCP connection, exactly as given (supertest and fetch cannot send
 * broken HTTP), and reads until the server closes the connection or `timeoutMs` passes.
 */
export function exchange(
  port: number,
  payload: string | Buffer | Array<string | Buffer>,
  { timeoutMs = 5000, pauseMs = 0 }: ExchangeOptions = {},
): Promise<RawExchange> {
  const parts = Array.isArray(payload) ? payload : [payload];
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let done = false;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      const raw = Buffer.concat(chunks).toString('latin1');
      resolve({ responses: parseResponses(raw), closed, raw });
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('close', () => finish(true));
    socket.on('error', () => finish(true)); // a reset after the reply still counts as closed
    socket.on('connect', () => {
      void (async () => {
        for (const [index, part] of parts.entries()) {
          if (index > 0 && pauseMs > 0) await new Promise((resume) => setTimeout(resume, pauseMs));
          if (socket.destroyed) return;
          socket.write(typeof part === 'string' ? Buffer.from(part, 'latin1') : part);
        }
      })();
    });
  });
}

/** Splits what a server sent into responses (Content-Length, chunked, or up to the close). */
export function parseResponses(raw: string): RawResponse[] {
  const responses: RawResponse[] = [];
  let rest = raw;
  while (rest.length > 0) {
    const headEnd = rest.indexOf('\r\n\r\n');
    if (headEnd < 0) throw new Error(`incomplete response head: ${JSON.stringify(rest.slice(0, 200))}`);
    const [statusLine, ...headerLines] = rest.slice(0, headEnd).split('\r\n');
    const status = /^HTTP\/1\.[01] (\d{3})(?: .*)?$/.exec(statusLine);
    if (!status) throw new Error(`not an HTTP status line: ${JSON.stringify(statusLine)}`);
    const headers: Record<string, string[]> = {};
    for (const line of headerLines) {
      const colon = line.indexOf(':');
      const name = line.slice(0, colon).toLowerCase();
      (headers[name] ??= []).push(line.slice(colon + 1).trim());
    }
    rest = rest.slice(headEnd + 4);
    let body = '';
    const code = Number(status[1]);
    if (code >= 100 && code < 200) {
      // an interim response has no body
    } else if (headers['content-length']) {
      const length = Number(headers['content-length'][0]);
      body = rest.slice(0, length);
      rest = rest.slice(length);
    } else if (headers['transfer-encoding']?.[0] === 'chunked') {
      for (;;) {
        const lineEnd = rest.indexOf('\r\n');
        const size = parseInt(rest.slice(0, lineEnd), 16);
        rest = rest.slice(lineEnd + 2);
        if (size === 0) {
          rest = rest.slice(rest.indexOf('\r\n') + 2);
          break;
        }
        body += rest.slice(0, size);
        rest = rest.slice(size + 2);
      }
    } else {
      body = rest;
      rest = '';
    }
    responses.push({ status: code, headers, body: Buffer.from(body, 'latin1').toString('utf8') });
  }
  return responses;
}

export interface RequestParts {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  /** Sent as is; Content-Length is added for it unless `headers` already has one. */
  body?: string | Buffer;
  /** Leave out the API key. */
  anonymous?: boolean;
}

export interface HttpReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

const keepAlive = new Agent({ keepAlive: true, maxSockets: 16 });

/**
 * One request with Node's HTTP client, the path sent exactly as given (no normalisation of
 * `..`, no re-encoding as fetch and supertest do), with the test key unless told otherwise.
 */
export function call(
  port: number,
  method: string,
  path: string,
  body?: string,
  headers: Record<string, string> = { Authorization: `Bearer ${TEST_KEY}` },
): Promise<HttpReply> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent: keepAlive,
        headers: body === undefined ? headers : { ...headers, 'Content-Type': 'application/json' },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode!,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/** The reply as a RawResponse, for `expectError`. */
export function asRaw(reply: HttpReply): RawResponse {
  const headers: Record<string, string[]> = {};
  for (const [name, value] of Object.entries(reply.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value : [value];
  }
  return { status: reply.status, headers, body: reply.body };
}

/** A well-formed HTTP/1.1 request (with the test key and `Connection: close`) as bytes. */
export function httpRequest({
  method = 'GET',
  path = '/v1/pets',
  headers = {},
  body,
  anonymous = false,
}: RequestParts = {}): Buffer {
  const all: Record<string, string> = {
    Host: '127.0.0.1',
    ...(anonymous ? {} : { Authorization: `Bearer ${TEST_KEY}` }),
    Connection: 'close',
    ...headers,
  };
  const payload = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  const named = Object.keys(all).map((name) => name.toLowerCase());
  if (payload && !named.includes('content-length') && !named.includes('transfer-encoding')) {
    all['Content-Length'] = String(payload.length);
  }
  const head = Object.entries(all)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  return Buffer.concat([
    Buffer.from(`${method} ${path} HTTP/1.1\r\n${head}\r\n`, 'latin1'),
    payload ?? Buffer.alloc(0),
  ]);
}

/** A JSON POST /v1/pets. */
export function postJson(body: string | Buffer, headers: Record<string, string> = {}): Buffer {
  return httpRequest({
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body,
  });
}

/** What an error message must never show: stack frames, file paths, SQL, framework or class names. */
const INTERNALS = [
  /\n\s*at /,
  /\bat \S+ \(/,
  /[/\\](?:src|dist|node_modules|home|work|usr|tmp|app)[/\\]/,
  /\.(?:ts|js|mjs|cjs):\d+/,
  /\b(?:SELECT|INSERT INTO|UPDATE \w+ SET|DELETE FROM|CREATE TABLE|PRAGMA|SQLITE_\w+)\b/,
  /\b(?:sqlite|typeorm|postgres|nest|express|body-parser|class-validator|class-transformer|llhttp)\b/i,
  /\b[A-Z]\w*(?:Exception|Error)\b/,
  /\bHPE_\w+|\bERR_\w+|\bE[A-Z]{4,}\b/,
  /Unexpected token|in JSON at position|is not valid JSON:/,
];

export function expectNoInternals(message: string): void {
  for (const pattern of INTERNALS)
    expect({ message, leaks: pattern.test(message) }).toEqual({ message, leaks: false });
}

/**
 * The response is the Error body with this status and code: `application/json; charset=utf-8`,
 * a Content-Length that matches, exactly `{code, message, status}` (validation errors may add
 * `details`), and a message that reveals no internals.
 */
export function expectError(response: RawResponse | undefined, status: number, code: string): void {
  expect(response).toBeDefined();
  const { headers, body } = response!;
  expect({ status: response!.status, contentType: headers['content-type'] }).toEqual({
    status,
    contentType: ['application/json; charset=utf-8'],
  });
  expect(headers['content-length']).toEqual([String(Buffer.byteLength(body))]);
  const parsed = JSON.parse(body) as Record<string, unknown>;
  expect(Object.keys(parsed).sort()).toEqual(
    'details' in parsed ? ['code', 'details', 'message', 'status'] : ['code', 'message', 'status'],
  );
  expect(parsed).toMatchObject({ code, status });
  expect(typeof parsed.message).toBe('string');
  expect((parsed.message as string).length).toBeGreaterThan(0);
  expectNoInternals(parsed.message as string);
  if ('details' in parsed) {
    expect(Array.isArray(parsed.details)).toBe(true);
    for (const detail of parsed.details as unknown[]) {
      expect(Object.keys(detail as object).sort()).toEqual(['field', 'message']);
    }
  }
}
