import type { Express } from 'express';
import * as http from 'node:http';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import { responseOf } from '../common/response-of';
import { loadConfig } from '../config/app-config';
import { ExpressServerAdapter, withPrototype } from './express-server.adapter';

/** The prototypes a request and its response have when the server emits them, before Express. */
async function prototypesOnArrival(server: http.Server): Promise<{ request: object; response: object }> {
  let seen: { request: object; response: object } | undefined;
  server.prependListener('request', (req, res) => {
    seen = { request: Object.getPrototypeOf(req), response: Object.getPrototypeOf(res) };
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const answer = await fetch(`http://127.0.0.1:${port}/hello?name=x`);
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ query: 'x', url: '/hello?name=x' });
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
  if (seen === undefined) throw new Error('no request arrived');
  return seen;
}

function adapterWithRoute(): ExpressServerAdapter {
  const adapter = new ExpressServerAdapter(loadConfig({}).http);
  const app = adapter.getInstance<Express>();
  app.set('query parser', 'simple');
  app.get('/hello', (req, res) => {
    res.json({ query: req.query.name, url: req.originalUrl });
  });
  return adapter;
}

describe('ExpressServerAdapter', () => {
  it("builds every request and response with the Express app's prototypes, and the app answers", async () => {
    const adapter = adapterWithRoute();
    adapter.initHttpServer({});
    const app = adapter.getInstance<Express>();

    const seen = await prototypesOnArrival(adapter.getHttpServer());

    expect(seen.request).toBe(app.request);
    expect(seen.response).toBe(app.response);
  });

  it("leaves a server with https or forced connection closing to Nest's adapter", async () => {
    const forced = adapterWithRoute();
    forced.initHttpServer({ forceCloseConnections: true });
    const seen = await prototypesOnArrival(forced.getHttpServer());
    expect(seen.request).toBe(http.IncomingMessage.prototype);
    expect(seen.response).toBe(http.ServerResponse.prototype);

    const secure = adapterWithRoute();
    secure.initHttpServer({ httpsOptions: {} });
    expect(secure.getHttpServer()).toBeInstanceOf(https.Server);
  });
});

describe('withPrototype', () => {
  it('builds the object as the base constructor does, with the given prototype', () => {
    const prototype = Object.create(http.ServerResponse.prototype) as object;
    const Response = withPrototype(http.ServerResponse, prototype);
    if (Response === undefined)
      throw new Error('Node’s ServerResponse is expected to be a constructor function');
    const request = new http.IncomingMessage(undefined as never);
    request.method = 'GET';

    const response = new Response(request);

    expect(Object.getPrototypeOf(response)).toBe(prototype);
    expect(response).toBeInstanceOf(http.ServerResponse);
    expect(response.statusCode).toBe(200);
    expect(response.req).toBe(request);
  });

  it('declines an ES class, which cannot be called on an object it did not create', () => {
    class Message {
      readonly made = true;
    }
    expect(withPrototype(Message, {})).toBeUndefined();
  });
});

describe('ExpressServerAdapter.reply', () => {
  const served = async (body: unknown, init: RequestInit = {}) => {
    const adapter = new ExpressServerAdapter(loadConfig({}).http);
    adapter.getInstance<Express>().all('/answer', (_req, res) => adapter.reply(res, body, 200));
    adapter.initHttpServer({});
    const server = adapter.getHttpServer() as http.Server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const answer = await fetch(`http://127.0.0.1:${port}/answer`, init);
      return { status: answer.status, headers: answer.headers, text: await answer.text() };
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  };

  it('writes an object as res.json would: the same bytes, Content-Type and Content-Length', async () => {
    const body = { name: 'Zoë 😀', list: [1, 2] };
    const answer = await served(body);

    expect(answer.status).toBe(200);
    expect(answer.text).toBe(JSON.stringify(body));
    expect(answer.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(answer.headers.get('content-length')).toBe(String(Buffer.byteLength(JSON.stringify(body))));
  });

  it('writes a body made by responseOf with the JSON serialised at its first answer', async () => {
    const body = responseOf({ id: 1 }, (row) => ({ id: row.id, name: 'Rex' }));
    const stringify = jest.spyOn(JSON, 'stringify');
    try {
      expect((await served(body)).text).toBe('{"id":1,"name":"Rex"}');
      expect((await served(body)).text).toBe('{"id":1,"name":"Rex"}');
      expect(stringify.mock.calls.filter(([value]) => value === body)).toHaveLength(1);
    } finally {
      stringify.mockRestore();
    }
  });

  it('answers HEAD with the headers only', async () => {
    const head = await served({ id: 1 }, { method: 'HEAD' });
    expect(head.headers.get('content-length')).toBe('8');
    expect(head.text).toBe('');
  });
});
