import { EventEmitter } from 'node:events';
import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { NextFunction, Request, Response } from 'express';
import { ApiException } from '../common/errors/api-exception';
import { answerClientError, answerProtocolErrors, checkRequestHeaders, errorReply } from './protocol-errors';

interface FakeSocket {
  writable: boolean;
  _httpMessage?: { headersSent: boolean };
  end: jest.Mock;
  destroy: jest.Mock;
}

function fakeSocket(fields: Partial<FakeSocket> = {}): FakeSocket {
  return {
    writable: true,
    end: jest.fn((_data: string, done: () => void) => done()),
    destroy: jest.fn(),
    ...fields,
  };
}

function clientError(code: string | undefined, socket: FakeSocket): void {
  answerClientError(Object.assign(new Error('parse error'), { code }), socket as unknown as Duplex);
}

/** Status line, headers and body of what was written to the socket. */
function written(socket: FakeSocket) {
  expect(socket.end).toHaveBeenCalledTimes(1);
  const reply = socket.end.mock.calls[0][0] as string;
  const [head, body] = reply.split('\r\n\r\n');
  const [statusLine, ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(lines.map((line) => line.split(': ') as [string, string]));
  return { statusLine, headers, body: JSON.parse(body) as unknown, bodyBytes: Buffer.byteLength(body) };
}

describe('errorReply', () => {
  it('is a whole HTTP/1.1 response with the Error body, its length, and Connection: close', () => {
    const reply = errorReply('headers_too_large');
    const [head, body] = reply.split('\r\n\r\n');
    const lines = head.split('\r\n');
    expect(lines[0]).toBe('HTTP/1.1 431 Request Header Fields Too Large');
    expect(lines.slice(1)).toEqual([
      expect.stringMatching(/^Date: \w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/),
      'Content-Type: application/json; charset=utf-8',
      `Content-Length: ${Buffer.byteLength(body)}`,
      'Cache-Control: no-store',
      "Content-Security-Policy: default-src 'none'; frame-ancestors 'none'",
      'X-Content-Type-Options: nosniff',
      'X-Frame-Options: DENY',
      'Strict-Transport-Security: max-age=31536000; includeSubDomains',
      'Referrer-Policy: no-referrer',
      expect.stringMatching(/^X-Request-Id: [0-9a-f-]{36}$/),
      'Connection: close',
    ]);
    expect(JSON.parse(body)).toEqual({
      code: 'headers_too_large',
      message: 'The request line and headers are larger than the limit.',
      status: 431,
    });
  });

  it('counts the body in bytes, not characters', () => {
    const reply = errorReply('bad_request', 'Zoë 😀');
    const body = reply.split('\r\n\r\n')[1];
    expect(reply).toContain(`Content-Length: ${Buffer.byteLength(body)}`);
    expect(Buffer.byteLength(body)).toBeGreaterThan(body.length);
  });
});

describe('answerClientError', () => {
  it.each([
    ['HPE_HEADER_OVERFLOW', 'HTTP/1.1 431 Request Header Fields Too Large', 'headers_too_large'],
    ['ERR_HTTP_REQUEST_TIMEOUT', 'HTTP/1.1 408 Request Timeout', 'request_timeout'],
    ['HPE_CHUNK_EXTENSIONS_OVERFLOW', 'HTTP/1.1 413 Payload Too Large', 'payload_too_large'],
    ['HPE_INVALID_CHUNK_SIZE', 'HTTP/1.1 400 Bad Request', 'bad_request'],
    ['HPE_UNEXPECTED_CONTENT_LENGTH', 'HTTP/1.1 400 Bad Request', 'bad_request'],
    ['HPE_INVALID_METHOD', 'HTTP/1.1 400 Bad Request', 'bad_request'],
  ])('answers %s with %s and the %s Error body, then closes', (code, statusLine, errorCode) => {
    const socket = fakeSocket();
    clientError(code, socket);
    const reply = written(socket);
    expect(reply.statusLine).toBe(statusLine);
    expect(reply.body).toMatchObject({ code: errorCode, status: Number(statusLine.split(' ')[1]) });
    expect(reply.headers['Content-Length']).toBe(String(reply.bodyBytes));
    expect(reply.headers.Connection).toBe('close');
    expect(socket.destroy).toHaveBeenCalledTimes(1);
  });

  it.each([['HPE_SOMETHING_NEW'], [undefined]])(
    'answers an unknown parser error (%p) 400 without naming it',
    (code) => {
      const socket = fakeSocket();
      clientError(code, socket);
      expect(written(socket).body).toEqual({
        code: 'bad_request',
        message: 'The request is not valid HTTP/1.1.',
        status: 400,
      });
    },
  );

  it('only closes a reset connection', () => {
    const socket = fakeSocket();
    clientError('ECONNRESET', socket);
    expect(socket.end).not.toHaveBeenCalled();
    expect(socket.destroy).toHaveBeenCalledTimes(1);
  });

  it('only closes a socket that can no longer be written', () => {
    const socket = fakeSocket({ writable: false });
    clientError('HPE_INVALID_METHOD', socket);
    expect(socket.end).not.toHaveBeenCalled();
    expect(socket.destroy).toHaveBeenCalledTimes(1);
  });

  it('does not write into a response already under way on the connection', () => {
    const socket = fakeSocket({ _httpMessage: { headersSent: true } });
    clientError('HPE_INVALID_METHOD', socket);
    expect(socket.end).not.toHaveBeenCalled();
    expect(socket.destroy).toHaveBeenCalledTimes(1);
  });

  it('answers when an earlier response on the connection has not started', () => {
    const socket = fakeSocket({ _httpMessage: { headersSent: false } });
    clientError('HPE_INVALID_METHOD', socket);
    expect(written(socket).statusLine).toBe('HTTP/1.1 400 Bad Request');
  });

  it('closes only after the reply has been written out', () => {
    const socket = fakeSocket({ end: jest.fn() });
    clientError('HPE_INVALID_METHOD', socket);
    expect(socket.destroy).not.toHaveBeenCalled();
    (socket.end.mock.calls[0][1] as () => void)();
    expect(socket.destroy).toHaveBeenCalledTimes(1);
  });
});

describe('answerProtocolErrors', () => {
  it('handles clientError, checkExpectation and connect, and leaves the Host check to the app', () => {
    const server = new EventEmitter() as unknown as Server & { requireHostHeader: boolean };
    server.requireHostHeader = true;
    answerProtocolErrors(server);
    expect(server.listenerCount('clientError')).toBe(1);
    expect(server.listenerCount('checkExpectation')).toBe(1);
    expect(server.listenerCount('connect')).toBe(1);
    expect(server.requireHostHeader).toBe(false);
  });

  it('answers an unsupported expectation 417 with the Error body', () => {
    const server = new EventEmitter() as unknown as Server;
    answerProtocolErrors(server);
    const res = { writeHead: jest.fn(), end: jest.fn(), setHeader: jest.fn() };
    res.writeHead.mockReturnValue(res);
    server.emit('checkExpectation', { headers: {} }, res);
    const body = JSON.stringify({
      code: 'expectation_failed',
      message: 'Only the expectation 100-continue is supported.',
      status: 417,
    });
    expect(res.writeHead).toHaveBeenCalledWith(417, {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': String(Buffer.byteLength(body)),
      'Cache-Control': 'no-store',
      'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'",
      'X-Content-Type-Options': 'nosniff',
      'X-Frame-Options': 'DENY',
      'Strict-Transport-Security': 'max-age=31536000; includeSubDomains',
      'Referrer-Policy': 'no-referrer',
      'X-Request-Id': expect.stringMatching(/^[0-9a-f-]{36}$/),
      Connection: 'close',
    });
    expect(res.end).toHaveBeenCalledWith(body);
  });
});

describe('checkRequestHeaders', () => {
  function check(httpVersion: string, rawHeaders: string[]): unknown {
    const headers: Record<string, string> = {};
    for (let index = 0; index < rawHeaders.length; index += 2) {
      headers[rawHeaders[index].toLowerCase()] ??= rawHeaders[index + 1];
    }
    const next = jest.fn();
    checkRequestHeaders(
      { httpVersion, rawHeaders, headers } as unknown as Request,
      {} as Response,
      next as NextFunction,
    );
    expect(next).toHaveBeenCalledTimes(1);
    const [error] = next.mock.calls[0] as [unknown];
    if (error === undefined) return undefined;
    expect(error).toBeInstanceOf(ApiException);
    const exception = error as ApiException;
    return { code: exception.code, status: exception.getStatus(), message: exception.message };
  }

  it('passes a request with one Host and one of each single header', () => {
    expect(
      check('1.1', [
        'Host',
        'a',
        'Authorization',
        'Bearer x',
        'Content-Type',
        'application/json',
        'Accept',
        'a',
      ]),
    ).toBeUndefined();
  });

  it('passes list headers sent more than once', () => {
    expect(
      check('1.1', [
        'Host',
        'a',
        'Accept',
        'a',
        'Accept',
        'b',
        'X-Forwarded-For',
        '1',
        'x-forwarded-for',
        '2',
      ]),
    ).toBeUndefined();
  });

  it('passes HTTP/1.0 without Host', () => {
    expect(check('1.0', ['Accept', '*/*'])).toBeUndefined();
  });

  it('refuses HTTP/1.1 without Host', () => {
    expect(check('1.1', ['Accept', '*/*'])).toEqual({
      code: 'bad_request',
      status: 400,
      message: 'An HTTP/1.1 request must carry a Host header.',
    });
  });

  it.each([
    ['Host', 'host'],
    ['Authorization', 'authorization'],
    ['Content-Type', 'content-type'],
  ])('refuses %s sent twice, whatever the case of its name', (name, lower) => {
    expect(
      check('1.1', ['Host', 'a', ...(name === 'Host' ? [] : [name, 'x']), lower.toUpperCase(), 'y']),
    ).toEqual({
      code: 'bad_request',
      status: 400,
      message: `The ${lower} header must not be sent more than once.`,
    });
  });

  it("answers 417 with the request's own X-Request-Id when it sent a well-formed one", () => {
    const server = new EventEmitter() as unknown as Server;
    answerProtocolErrors(server);
    const res = { writeHead: jest.fn(), end: jest.fn(), setHeader: jest.fn() };
    res.writeHead.mockReturnValue(res);
    server.emit('checkExpectation', { headers: { 'x-request-id': 'client-id-417' } }, res);
    expect(res.writeHead).toHaveBeenCalledWith(
      417,
      expect.objectContaining({ 'X-Request-Id': 'client-id-417' }),
    );
  });
});
