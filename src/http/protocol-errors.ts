import { randomUUID } from 'node:crypto';
import { IncomingMessage, Server, ServerResponse, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { NextFunction, Request, Response } from 'express';
import { ApiException } from '../common/errors/api-exception';
import { ERROR_CODES, ErrorCode } from '../common/errors/error-codes';
import { REQUEST_ID_HEADER } from '../common/openapi/headers';
import { requestIdFor } from './request-log';
import { API_SECURITY_HEADERS } from './security-headers';
import { JSON_CONTENT_TYPE } from './express-server.adapter';

const CLIENT_ERRORS: Record<string, [ErrorCode, string?]> = {
  HPE_HEADER_OVERFLOW: ['headers_too_large'],
  HPE_CHUNK_EXTENSIONS_OVERFLOW: [
    'payload_too_large',
    'The chunk extensions of the request body are too large.',
  ],
  ERR_HTTP_REQUEST_TIMEOUT: ['request_timeout'],
  HPE_INVALID_CHUNK_SIZE: ['bad_request', 'The chunked request body is malformed.'],
  HPE_INVALID_CONTENT_LENGTH: ['bad_request', 'The Content-Length header is not valid.'],
  HPE_UNEXPECTED_CONTENT_LENGTH: [
    'bad_request',
    'Content-Length must be sent once, and not together with Transfer-Encoding.',
  ],
  HPE_INVALID_TRANSFER_ENCODING: [
    'bad_request',
    'Transfer-Encoding must end in chunked, and not be sent together with Content-Length.',
  ],
  HPE_INVALID_METHOD: ['bad_request', 'The request method is not valid.'],
  HPE_INVALID_URL: ['bad_request', 'The request target is not a valid URL path.'],
  HPE_INVALID_VERSION: ['bad_request', 'Only HTTP/1.0 and HTTP/1.1 are supported.'],
  HPE_INVALID_HEADER_TOKEN: ['bad_request', 'A request header is malformed.'],
};
const NOT_HTTP: [ErrorCode, string] = ['bad_request', 'The request is not valid HTTP/1.1.'];

function errorResponse(
  code: ErrorCode,
  message: string = ERROR_CODES[code].message,
  requestId: string = randomUUID(),
) {
  const { status } = ERROR_CODES[code];
  const body = JSON.stringify({ code, message, status });
  const headers = {
    'Content-Type': JSON_CONTENT_TYPE,
    'Content-Length': String(Buffer.byteLength(body)),
    ...API_SECURITY_HEADERS,
    // No request was read, so there is no id to echo: a new one.
    [REQUEST_ID_HEADER]: requestId,
    Connection: 'close',
  };
  return { status, headers, body };
}

export function errorReply(code: ErrorCode, message?: string, requestId?: string): string {
  const { status, headers, body } = errorResponse(code, message, requestId);
  const lines = Object.entries({ Date: new Date().toUTCString(), ...headers }).map(
    ([name, value]) => `${name}: ${value}`,
  );
  return [`HTTP/1.1 ${status} ${STATUS_CODES[status]}`, ...lines, '', body].join('\r\n');
}

type Warn = (fields: object, message: string) => void;

/** Nothing is written once an earlier response on the socket has started: that would corrupt the stream. */
export function answerClientError(error: Error & { code?: string }, socket: Duplex, warn?: Warn): void {
  const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse })._httpMessage;
  if (error.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  const [code, message] = CLIENT_ERRORS[error.code ?? ''] ?? NOT_HTTP;
  // Timed out while its body arrived: the request in flight is this one (else an earlier one).
  const own = error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? inFlight : undefined;
  const requestId = String(own?.getHeader(REQUEST_ID_HEADER) ?? randomUUID());
  const { status, headers, body } = errorResponse(code, message, requestId);
  if (own) {
    own.writeHead(status, headers).end(body, () => socket.destroy());
    return;
  }
  const address = (socket as Duplex & { remoteAddress?: string }).remoteAddress;
  warn?.(
    { reqId: requestId, ip: address, status, reason: error.code ?? 'not HTTP' },
    `refused by the HTTP parser: ${status} ${code} (${error.code ?? 'not HTTP'})`,
  );
  socket.end(errorReply(code, message, requestId), () => socket.destroy());
}

/** The Error shape where Node would answer bare or not at all. */
export function answerProtocolErrors(server: Server, warn?: Warn): void {
  server.on('clientError', (error: Error & { code?: string }, socket: Duplex) =>
    answerClientError(error, socket, warn),
  );
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    const { status, headers, body } = errorResponse('expectation_failed', undefined, requestIdFor(req, res));
    res.writeHead(status, headers).end(body);
  });
  server.on('connect', (_req: IncomingMessage, socket: Duplex) => {
    const reply = errorReply('bad_request', 'CONNECT is not supported: this server is not a proxy.');
    socket.end(reply, () => socket.destroy());
  });
  // Node's own check answers a bare 400; ours (checkRequestHeaders) the Error body.
  (server as Server & { requireHostHeader: boolean }).requireHostHeader = false;
}

/** Node keeps the first of several, a proxy may read another; one bit each, to check without allocating. */
const SINGLE_HEADERS: Readonly<Record<string, number>> = { host: 1, authorization: 2, 'content-type': 4 };
const SINGLE_HEADER_LENGTHS = new Set(Object.keys(SINGLE_HEADERS).map((name) => name.length));

/** HTTP/1.1 needs Host (RFC 9112 §3.2); a header that is not a list must not repeat (RFC 9110 §5.3). */
export function checkRequestHeaders(req: Request, _res: Response, next: NextFunction): void {
  if (req.httpVersion === '1.1' && req.headers.host === undefined)
    return next(new ApiException('bad_request', 'An HTTP/1.1 request must carry a Host header.'));
  const raw = req.rawHeaders;
  let seen = 0;
  for (let index = 0; index < raw.length; index += 2) {
    if (!SINGLE_HEADER_LENGTHS.has(raw[index].length)) continue;
    const name = raw[index].toLowerCase();
    const bit = Object.hasOwn(SINGLE_HEADERS, name) ? SINGLE_HEADERS[name] : 0;
    if (bit === 0) continue;
    if ((seen & bit) !== 0)
      return next(new ApiException('bad_request', `The ${name} header must not be sent more than once.`));
    seen |= bit;
  }
  next();
}
