import { ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
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

/** Launches the service and waits until it says where it listens. */
export async function spawnService(env: Record<string, string>, timeoutMs = 30000): Promise<RunningService> {
  const service = launchService(env);
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`service did not start:\n${service.output()}`)),
      timeoutMs,
    );
    service.child.stdout!.on('data', () => {
      const match = /listening on (http:\/\/\S+)\/v1/.exec(service.output());
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    service.child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`service exited with ${code}:\n${service.output()}`));
    });
  });
  return { ...service, url };
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
