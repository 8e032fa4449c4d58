import { once } from 'node:events';
import { createServer, Server } from 'node:http';
import { AddressInfo, connect } from 'node:net';
import { limitConnections } from './connection-limits';

describe('limitConnections', () => {
  let server: Server;
  let handling = 0;
  let mostAtOnce = 0;

  beforeEach(async () => {
    server = createServer();
    [handling, mostAtOnce] = [0, 0];
    // Each answer takes a while once the request is read, as one from the database does.
    limitConnections(server, { maxPipelined: 2, idleTimeoutMs: 5000, checkEveryMs: 1000 }, (req, res) => {
      mostAtOnce = Math.max(mostAtOnce, ++handling);
      req.resume().on('end', () =>
        setTimeout(() => {
          handling--;
          res.end(req.url);
        }, 5),
      );
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
  });

  afterEach(() => new Promise((closed) => server.close(closed)));

  /** Sends `payload` and half-closes; the status line and body of each answer, once the server has closed. */
  async function halfClosing(payload: string): Promise<string[][]> {
    const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    socket.end(payload);
    await once(socket, 'close');
    return received
      .split(/(?=HTTP\/1\.1 )/)
      .map((answer) => answer.split('\r\n\r\n'))
      .map(([head, body]) => [head.split('\r\n')[0], body]);
  }

  it('answers every request a client pipelined before it half-closed, then closes', async () => {
    // Past `maxPipelined` and a parser slice: most of them wait, unparsed, when the FIN comes.
    const paths = Array.from({ length: 10 }, (_, i) => `/${i}`);
    const requests = paths.map(
      (path) => `GET ${path} HTTP/1.1\r\nHost: a\r\nX-Pad: ${'x'.repeat(200)}\r\n\r\n`,
    );

    await expect(halfClosing(requests.join(''))).resolves.toEqual(
      paths.map((path) => ['HTTP/1.1 200 OK', path]),
    );
  });

  it('hands at most maxPipelined requests of a connection on at once, also of one read that brings 200', async () => {
    const paths = Array.from({ length: 200 }, (_, i) => `/${i}`);

    await expect(
      halfClosing(paths.map((path) => `GET ${path} HTTP/1.1\r\nHost: a\r\n\r\n`).join('')),
    ).resolves.toEqual(paths.map((path) => ['HTTP/1.1 200 OK', path]));
    expect(mostAtOnce).toBe(2);
  });

  it('does not wait for the rest of a request the FIN cut short', async () => {
    const started = Date.now();

    await expect(
      halfClosing('POST /cut HTTP/1.1\r\nHost: a\r\nContent-Length: 100\r\n\r\n{'),
    ).resolves.toEqual([['HTTP/1.1 400 Bad Request', '']]);
    expect(Date.now() - started).toBeLessThan(1000);
  });
});
