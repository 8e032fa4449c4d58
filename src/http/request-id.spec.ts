import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { requestIdFor } from './request-id';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

function exchange(header?: string | string[]): { req: IncomingMessage; res: ServerResponse } {
  const req = new IncomingMessage(new Socket());
  if (header !== undefined) req.headers['x-request-id'] = header;
  return { req, res: new ServerResponse(req) };
}

/** Kept as the request's id, not replaced by a new one. */
function isWellFormedRequestId(id?: string | string[]): boolean {
  const { req, res } = exchange(id);
  return requestIdFor(req, res) === id;
}

describe('a well-formed request id', () => {
  it.each(['a', 'abc-123', 'req_01HF.2:x', 'A'.repeat(128), '0f8fad5b-d9cb-469f-a165-70867728950e'])(
    'accepts %s',
    (id) => {
      expect(isWellFormedRequestId(id)).toBe(true);
    },
  );

  it.each([
    ['empty', ''],
    ['129 characters', 'A'.repeat(129)],
    ['a space', 'abc 123'],
    ['a line break', 'abc\n{"level":"fatal"}'],
    ['a quote', 'abc"123'],
    ['a slash', 'abc/123'],
    ['non-ASCII', 'idé'],
    ['two ids joined by Node', 'one, two'],
  ])('refuses %s', (_label, id) => {
    expect(isWellFormedRequestId(id)).toBe(false);
  });

  it('refuses anything but a string', () => {
    expect(isWellFormedRequestId(undefined)).toBe(false);
    expect(isWellFormedRequestId(['abc'])).toBe(false);
  });
});

describe('requestIdFor', () => {
  it('keeps a well-formed incoming id and echoes it', () => {
    const { req, res } = exchange('client-id-42');
    expect(requestIdFor(req, res)).toBe('client-id-42');
    expect(res.getHeader('X-Request-Id')).toBe('client-id-42');
  });

  it.each([undefined, '', 'bad id', 'x'.repeat(200)])('generates a UUID instead of %p', (header) => {
    const { req, res } = exchange(header);
    const id = requestIdFor(req, res);
    expect(id).toMatch(UUID);
    expect(res.getHeader('X-Request-Id')).toBe(id);
  });

  it('generates a different id for each request', () => {
    const ids = new Set(Array.from({ length: 50 }, () => requestIdFor(exchange().req, exchange().res)));
    expect(ids.size).toBe(50);
  });
});
