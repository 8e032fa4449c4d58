import { once } from 'node:events';
import { createServer } from 'node:net';

/** A loopback port nothing listens on right now. */
export async function sparePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}
