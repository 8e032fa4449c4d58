import { ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { connect, createServer, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { sparePort } from './ports';

const execFileAsync = promisify(execFile);

/**
 * Database and Redis servers of a test's own, on spare loopback ports, that the test may stop
 * and start: the machine's shared servers are never touched.
 */

/** The bin folder of the newest PostgreSQL installed the Debian way, if any. */
export function postgresBinaries(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((name) => existsSync(join(root, name, 'bin', 'pg_ctl')))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length > 0 ? join(root, versions[0], 'bin') : undefined;
}

export interface PostgresCluster {
  url: string;
  port: number;
  /** Fast shutdown: sessions get 57P01 (admin shutdown); resolves when the server is down. */
  stop(): Promise<void>;
  /** Resolves once the server accepts connections again. */
  start(): Promise<void>;
  destroy(): void;
}

/**
 * A PostgreSQL cluster of the test's own (initdb + pg_ctl), trust authentication, listening on
 * 127.0.0.1 only. initdb refuses to run as root, so as root it runs as the `postgres` user.
 */
export async function startPostgresCluster(bin: string): Promise<PostgresCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-pg-'));
  const data = join(dir, 'data');
  const port = await sparePort();
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    chownSync(dir, uid, gid);
    chmodSync(dir, 0o700);
  }
  const command = (tool: string, args: string[]): [string, string[]] =>
    asRoot ? ['runuser', ['-u', 'postgres', '--', join(bin, tool), ...args]] : [join(bin, tool), args];
  const run = async (tool: string, args: string[]) => {
    await execFileAsync(...command(tool, args), { cwd: dir });
  };
  const runSync = (tool: string, args: string[]) =>
    execFileSync(...command(tool, args), { stdio: 'pipe', cwd: dir });
  runSync('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']);
  const options = `-c listen_addresses=127.0.0.1 -p ${port} -k ${dir} -c fsync=off -c max_connections=60`;
  const start = () =>
    run('pg_ctl', ['-D', data, '-o', options, '-l', join(dir, 'log'), '-w', '-t', '30', 'start']);
  await start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    stop: () => run('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']),
    start,
    destroy: () => {
      try {
        runSync('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } catch {
        // already stopped
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface RedisServer {
  url: string;
  stop(): Promise<void>;
  start(): Promise<void>;
}

/** A redis-server of the test's own (no persistence), if the machine has one. */
export async function startRedisServer(): Promise<RedisServer | undefined> {
  const binary = ['/usr/bin/redis-server', '/usr/local/bin/redis-server'].find((path) => existsSync(path));
  if (!binary) return undefined;
  const port = await sparePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn(
      binary,
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      {
        stdio: ['ignore', 'pipe', 'ignore'],
      },
    );
    let output = '';
    await new Promise<void>((resolve, reject) => {
      child!.stdout!.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('Ready to accept connections')) resolve();
      });
      child!.once('exit', (code) => reject(new Error(`redis-server exited with ${code}: ${output}`)));
    });
  };
  const stop = async () => {
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    await exited;
  };
  await start();
  return { url: `redis://127.0.0.1:${port}`, stop, start };
}

export interface CuttingProxy {
  port: number;
  /**
   * The next COMMIT that passes reaches the server, but its answer never reaches the client:
   * the connection is cut once the server has had time to commit (an outcome the client cannot know).
   */
  cutAfterNextCommit(): void;
  /**
   * While on, each new connection is ended by the server in the packet that completes it: its
   * ReadyForQuery followed by a fast shutdown's 57P01, as a restart can send them. Existing
   * connections are cut, so that the next statement needs a new one.
   */
  endNewConnections(on: boolean): void;
  close(): Promise<void>;
}

/** ReadyForQuery (idle), the last message of a connection's start-up. */
const READY = Buffer.from([0x5a, 0, 0, 0, 5, 0x49]);

/** An ErrorResponse as PostgreSQL's fast shutdown sends it to each connection. */
function shutdownError(): Buffer {
  const fields = Buffer.from(
    'SFATAL\0VFATAL\0C57P01\0Mterminating connection due to administrator command\0\0',
    'latin1',
  );
  const length = Buffer.alloc(4);
  length.writeInt32BE(fields.length + 4);
  return Buffer.concat([Buffer.from('E'), length, fields]);
}

/**
 * A TCP proxy in front of a PostgreSQL server that can lose the answer to a COMMIT (the
 * client sees its connection break, the server has committed) or end connections as they open.
 */
export async function startCuttingProxy(targetPort: number): Promise<CuttingProxy> {
  let armed = false;
  let ending = false;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(targetPort, '127.0.0.1');
    sockets.add(client).add(upstream);
    let cutting = false;
    let starting = ending;
    const cut = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('data', (chunk: Buffer) => {
      upstream.write(chunk);
      // A simple-protocol query message ('Q') whose text is COMMIT.
      if (armed && chunk[0] === 0x51 && /^COMMIT\b/i.test(chunk.subarray(5).toString('utf8'))) {
        armed = false;
        cutting = true;
        setTimeout(cut, 300);
      }
    });
    upstream.on('data', (chunk: Buffer) => {
      if (starting && chunk.includes(READY)) {
        starting = false;
        cutting = true;
        client.write(Buffer.concat([chunk, shutdownError()]));
        setTimeout(cut, 50);
      }
      if (!cutting) client.write(chunk);
    });
    for (const socket of [client, upstream]) {
      socket.on('error', cut);
      socket.on('close', () => {
        sockets.delete(socket);
        cut();
      });
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as { port: number }).port,
    cutAfterNextCommit: () => (armed = true),
    endNewConnections: (on) => {
      ending = on;
      if (on) for (const socket of sockets) socket.destroy();
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      server.close();
      await once(server, 'close');
    },
  };
}
