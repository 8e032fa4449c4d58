import { createServer, IncomingHttpHeaders } from 'node:http';
import { AddressInfo } from 'node:net';

export interface Receipt {
  headers: IncomingHttpHeaders;
  body: string;
  /** When it arrived, and the status it was answered. */
  at: number;
  status: number;
}

/** A webhook receiver on loopback: it keeps every delivery, and `answer` decides each status. */
export async function startReceiver(answer: (receipt: Omit<Receipt, 'status'>) => number = () => 200) {
  const received: Receipt[] = [];
  let connections = 0;
  let open = 0;
  const server = createServer((req, res) => {
    receiver.mostOpen = Math.max(receiver.mostOpen, ++open);
    res.on('close', () => open--);
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const arrived = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
      const status = answer(arrived);
      received.push({ ...arrived, status });
      const respond = () => res.writeHead(status, receiver.answerHeaders).end('ok');
      if (receiver.answerAfterMs > 0) setTimeout(respond, receiver.answerAfterMs);
      else respond();
    });
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const receiver = {
    /** Headers of every answer (`Retry-After`). */
    answerHeaders: {} as Record<string, string>,
    /** How long each answer waits (a slow receiver). */
    answerAfterMs: 0,
    /** The most requests it held at once. */
    mostOpen: 0,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received,
    connections: () => connections,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return receiver;
}

/** Polls `check` until it gives a value (not undefined or false); fails after `timeoutMs`. */
export async function until<T>(
  check: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`nothing came within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
