/**
 * `npm run bench:compare -- A B`: the CPU time two builds spend per request, measured while both
 * are under the same load at the same time, so that both meet the same noise. On a shared
 * machine req/s swing with whatever else runs; the server's own CPU time per request swings much
 * less, and the median of the rounds' A/B ratios is the number to quote for a change.
 *
 * A and B are entry points (dist/main.js of two builds), or git refs: `npm run bench:compare --
 * dist/main.js main` compares this build with main's, built in a temporary worktree that links
 * this node_modules. A change to the request path quotes that comparison. Each is started once
 * on a fresh temporary database and seeded (--seed, 1000); then, scenario by scenario
 * (--scenarios, all), --rounds (8) runs of --duration s (3) at --connections (32) per server,
 * each after a 1 s warm-up. Both servers run pinned to the last CPU when taskset is there.
 * --a-flags / --b-flags give one side node flags (e.g. "--max-old-space-size=64"). --webhook
 * subscribes a local receiver (answering 204) to every event of each side that has webhooks, so
 * that deliveries run during the rounds. A side that has `PROCESS_ROLE` runs as an `api` process
 * and a `worker`, measured apart (CPU per request in the API, per delivery in the worker); an
 * older one delivers in its only process, whose CPU then includes them. --database
 * postgres://USER@HOST:PORT/DB runs each side on a PostgreSQL database of its own, created on that
 * server for the run (DB serves only to create them) and dropped at the end, also on SIGINT.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import {
  BenchContext,
  BenchDatabases,
  canPin,
  errorsOf,
  load,
  registerWebhook,
  ROOT,
  runToEnd,
  SCENARIOS,
  seed,
  Server,
  startReceiver,
} from './support';

interface Side {
  name: string;
  entry: string;
  flags: string[];
}

interface Run {
  cpuMicrosPerRequest: number;
  /** The worker's CPU per delivery received during the round, where the side has one and delivered. */
  workerMicrosPerDelivery?: number;
  p99Ms: number;
  requestsPerSecond: number;
  errors: number;
}

const USAGE = `usage: npm run bench:compare -- A B [options]   A, B: entry points (dist/main.js) or git refs
  --scenarios ${SCENARIOS.map((scenario) => scenario.name).join(',')} (all)  --rounds N (8)  --duration S (3)
  --connections N (32)  --seed N (1000)  --a-flags "node flags"  --b-flags "..."  --webhook
  --database postgres://USER@HOST:PORT/DB`;

function parse(argv: string[]) {
  const positional: string[] = [];
  const named: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--webhook') named.webhook = 'yes';
    else if (argv[i].startsWith('--')) named[argv[i].slice(2)] = argv[++i] ?? '';
    else positional.push(argv[i]);
  }
  if (positional.length !== 2) throw new Error(USAGE);
  const number = (name: string, fallback: number) =>
    named[name] === undefined ? fallback : Number(named[name]);
  const sides: Side[] = positional.map((entry, index) => ({
    name: index === 0 ? 'A' : 'B',
    entry,
    flags: (named[index === 0 ? 'a-flags' : 'b-flags'] ?? '').split(' ').filter(Boolean),
  }));
  const names = (named.scenarios ?? SCENARIOS.map((scenario) => scenario.name).join(',')).split(',');
  return {
    sides,
    scenarios: SCENARIOS.filter((scenario) => names.includes(scenario.name)).sort(
      (a, b) => Number(a.mutates ?? false) - Number(b.mutates ?? false),
    ),
    rounds: number('rounds', 8),
    duration: number('duration', 3),
    connections: number('connections', 32),
    seed: number('seed', 1000),
    webhook: named.webhook === 'yes',
    database: named.database,
  };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

/** The entry point of `entry`: a file as it is, or a git ref built in a worktree under `dir`. */
function builtEntry(entry: string, dir: string): string {
  if (existsSync(entry)) return resolve(entry);
  const tree = join(dir, `tree-${entry.replace(/[^\w.-]/g, '_')}`);
  const git = (...args: string[]) => execFileSync('git', args, { cwd: ROOT, stdio: 'pipe' });
  git('worktree', 'add', '--detach', tree, entry);
  symlinkSync(join(ROOT, 'node_modules'), join(tree, 'node_modules'));
  console.log(`building ${entry} in ${tree}`);
  execFileSync(join(ROOT, 'node_modules', '.bin', 'nest'), ['build', '-p', 'tsconfig.build.json'], {
    cwd: tree,
    stdio: 'inherit',
  });
  return join(tree, 'dist', 'main.js');
}

function removeWorktrees(dir: string): void {
  execFileSync('git', ['worktree', 'prune'], { cwd: ROOT });
  rmSync(dir, { recursive: true, force: true });
  execFileSync('git', ['worktree', 'prune'], { cwd: ROOT });
}

function main(): void {
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) {
    console.log(USAGE);
    return;
  }
  let dir: string | undefined;
  let databases: BenchDatabases | undefined;
  runToEnd(
    'compare',
    async () => {
      const options = parse(args);
      dir = mkdtempSync(join(tmpdir(), 'petstore-compare-'));
      databases = await BenchDatabases.open(dir, options.database);
      await compare(options, dir, databases);
    },
    async () => {
      await databases?.drop();
      if (dir !== undefined) removeWorktrees(dir);
    },
  );
}

async function compare(
  options: ReturnType<typeof parse>,
  dir: string,
  databases: BenchDatabases,
): Promise<void> {
  const pin = canPin();
  const servers: Server[] = [];
  const workers: Array<Server | undefined> = [];
  const receivers = options.webhook ? await Promise.all(options.sides.map(() => startReceiver())) : [];
  try {
    for (const side of options.sides) side.entry = builtEntry(side.entry, dir);
    console.log(`database: ${databases.describe()}`);
    const contexts: BenchContext[] = [];
    for (const [index, side] of options.sides.entries()) {
      const storage = await databases.create(side.name.toLowerCase());
      const roles = options.webhook && hasRoles(side.entry);
      const env = {
        ...(options.webhook ? { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } : {}),
        ...(roles ? { PROCESS_ROLE: 'api' } : {}),
      };
      const server = await Server.start(side.entry, storage, { pin, nodeArgs: side.flags, env });
      servers.push(server);
      const { baseUrl } = await server.ready();
      if (options.webhook && !(await registerWebhook(baseUrl, receivers[index].url)))
        console.log(`${side.name} has no webhooks: measured without deliveries`);
      workers.push(
        roles ? await Server.startWorker(side.entry, storage, { pin, nodeArgs: side.flags, env }) : undefined,
      );
      contexts.push({ baseUrl, ids: await seed(baseUrl, options.seed) });
      console.log(`${side.name}: ${[...side.flags, side.entry].join(' ')} (pid ${servers[index].child.pid})`);
    }
    console.log(
      `${options.rounds} rounds of ${options.duration} s, both servers under load at once, ${options.connections} connections each${pin ? ', both pinned to the last CPU' : ''}`,
    );
    for (const scenario of options.scenarios) {
      const runs: Run[][] = [[], []];
      const ratios: number[] = [];
      for (let round = 0; round < options.rounds; round++) {
        // Both sides under load at the same time, so that both meet the same noise: measured
        // one after the other, the second side came out up to a tenth cheaper for no reason of
        // its own.
        const measured = await Promise.all(
          servers.map(async (server, index) => {
            const worker = {
              cpu: workers[index]?.cpuSeconds() ?? 0,
              received: receivers[index]?.received() ?? 0,
            };
            const warmup = await load(contexts[index], scenario, options.connections, 1);
            return { server, warmup, before: server.cpuSeconds() ?? 0, worker };
          }),
        ).then((warmed) =>
          Promise.all(
            warmed.map(async ({ server, warmup, before, worker }, index) => {
              const result = await load(contexts[index], scenario, options.connections, options.duration);
              const cpu = (server.cpuSeconds() ?? 0) - before;
              // Over warm-up and run together: deliveries trail the requests that made them.
              const delivered = (receivers[index]?.received() ?? 0) - worker.received;
              const workerCpu = (workers[index]?.cpuSeconds() ?? 0) - worker.cpu;
              return {
                cpuMicrosPerRequest: (cpu / result.requests.total) * 1e6,
                ...(workers[index] && delivered > 0
                  ? { workerMicrosPerDelivery: (workerCpu / delivered) * 1e6 }
                  : {}),
                p99Ms: result.latency.p99,
                requestsPerSecond: result.requests.total / result.duration,
                errors: errorsOf(warmup) + errorsOf(result),
              };
            }),
          ),
        );
        measured.forEach((run, index) => runs[index].push(run));
        ratios.push(measured[0].cpuMicrosPerRequest / measured[1].cpuMicrosPerRequest);
      }
      const [a, b] = runs.map((sideRuns) => ({
        cpu: median(sideRuns.map((run) => run.cpuMicrosPerRequest)),
        rps: median(sideRuns.map((run) => run.requestsPerSecond)),
        p99: median(sideRuns.map((run) => run.p99Ms)),
        errors: sideRuns.reduce((sum, run) => sum + run.errors, 0),
        spread: sideRuns.map((run) => Math.round(run.cpuMicrosPerRequest)).join(' '),
      }));
      console.log(`\n${scenario.name}: ${scenario.description}`);
      console.log(
        `  A  CPU ${a.cpu.toFixed(0)} µs/req  ${a.rps.toFixed(0)} req/s  p99 ${a.p99} ms  errors ${a.errors}  [${a.spread}]`,
      );
      console.log(
        `  B  CPU ${b.cpu.toFixed(0)} µs/req  ${b.rps.toFixed(0)} req/s  p99 ${b.p99} ms  errors ${b.errors}  [${b.spread}]`,
      );
      const perDelivery = runs.map((sideRuns) =>
        sideRuns.flatMap((run) => run.workerMicrosPerDelivery ?? []),
      );
      perDelivery.forEach((values, index) => {
        if (values.length > 0)
          console.log(
            `  ${options.sides[index].name} worker: CPU ${median(values).toFixed(0)} µs per delivery  [${values.map(Math.round).join(' ')}]`,
          );
      });
      console.log(
        `  A/B: CPU per request ${median(ratios).toFixed(2)}x (median of the rounds' ratios: ${ratios.map((ratio) => ratio.toFixed(2)).join(' ')}), req/s ${(a.rps / b.rps).toFixed(2)}x`,
      );
      if (a.errors + b.errors > 0) process.exitCode = 1;
    }
    servers.forEach((server, index) =>
      console.log(`${options.sides[index].name} peak RSS: ${server.peakRssMb()?.toFixed(0) ?? 'n/a'} MB`),
    );
  } finally {
    receivers.forEach((receiver, index) =>
      console.log(`${options.sides[index].name} webhook deliveries received: ${receiver.received()}`),
    );
    await Promise.all(servers.map((server) => server.stop()));
    for (const worker of workers) await worker?.stop(20000);
    for (const receiver of receivers) receiver.server.close();
  }
}

/** Whether the build knows `PROCESS_ROLE` (its configuration names the variable). */
function hasRoles(entry: string): boolean {
  const config = join(dirname(entry), 'config', 'app-config.js');
  return existsSync(config) && readFileSync(config, 'utf8').includes("'PROCESS_ROLE'");
}

main();
