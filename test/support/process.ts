import { ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { AddressInfo, createServer } from 'node:net';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

export interface ServiceProcess {
  child: ChildProcess;
  output: () => string;
}

export interface RunningService extends ServiceProcess {
  url: string;
}

/** Runs the real entry point (src/main.ts) as `npm start` would, without the build step. */
export function launchService(env: Record<string, string>): ServiceProcess {
  const child = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', 'src/main.ts'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: '0', RATE_LIMIT_ENABLED: 'false', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const collect = (chunk: Buffer) => (output += chunk.toString());
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  return { child, output: () => output };
}

/** A port that is free on 127.0.0.1 right now. */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/**
 * Launches the service on a free port and waits until its liveness probe answers. (Not by
 * reading its start line: in production that is a log line, which LOG_LEVEL=warn leaves out.)
 */
export async function spawnService(env: Record<string, string>, timeoutMs = 30000): Promise<RunningService> {
  const port = env.PORT ?? String(await freePort());
  const service = launchService({ ...env, PORT: port });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (service.child.exitCode !== null || service.child.signalCode !== null) {
      throw new Error(
        `service exited with ${service.child.exitCode ?? service.child.signalCode}:\n${service.output()}`,
      );
    }
    const live = await fetch(`${url}/health/live`).catch(() => undefined);
    if (live?.status === 200) return { ...service, url };
    if (Date.now() > deadline) {
      service.child.kill('SIGKILL');
      throw new Error(`service did not start:\n${service.output()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Waits for a launched service to exit by itself; its exit code and everything it printed. */
export async function exitOf(service: ServiceProcess): Promise<{ code: number | null; output: string }> {
  const [code] = (await once(service.child, 'exit')) as [number | null];
  return { code, output: service.output() };
}

export async function stopService(
  service: ServiceProcess,
  signal: NodeJS.Signals = 'SIGTERM',
): Promise<void> {
  if (service.child.exitCode !== null || service.child.signalCode !== null) return;
  const exited = once(service.child, 'exit');
  service.child.kill(signal);
  await exited;
}
