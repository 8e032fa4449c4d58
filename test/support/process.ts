import { ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { CommandResult } from './apikey';
import { compiled } from './entry-points';
import { sparePort } from './ports';

const ROOT = join(__dirname, '..', '..');

export interface ServiceProcess {
  child: ChildProcess;
  output: () => string;
}

export interface RunningService extends ServiceProcess {
  url: string;
}

/**
 * Runs the real entry point as `npm start` does (`node dist/main.js` from the repository's
 * folder), compiled from the current src/ for this run (test/support/entry-points.ts).
 */
export function launchService(env: Record<string, string>): ServiceProcess {
  const child = spawn(process.execPath, [compiled('main.js')], {
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

/**
 * Launches the service on a free port and waits until its liveness probe answers. (Not by
 * reading its start line: in production that is a log line, which LOG_LEVEL=warn leaves out.)
 */
export async function spawnService(env: Record<string, string>, timeoutMs = 30000): Promise<RunningService> {
  const port = env.PORT ?? String(await sparePort());
  const service = launchService({ ...env, PORT: port });
  // A worker's probes are on HEALTH_PORT, its only port.
  const url = `http://127.0.0.1:${env.PROCESS_ROLE === 'worker' ? env.HEALTH_PORT : port}`;
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

const run = promisify(execFile);

/**
 * The key CLI's real entry point (src/cli/apikey.ts, compiled for this run) as a process of
 * its own on the given database: its exit status and what it printed.
 */
export async function apikeyProcess(env: Record<string, string>, ...args: string[]): Promise<CommandResult> {
  try {
    const { stdout, stderr } = await run(process.execPath, [compiled('cli/apikey.js'), ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as CommandResult;
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}
