/**
 * `npm run bench`: measures the built service (dist/main.js) the way it runs in production.
 *
 * 1. Starts `node dist/main.js` with NODE_ENV=production, a generated API key and a fresh
 *    temporary DATABASE_PATH (every other variable, e.g. SQLITE_SYNCHRONOUS, passes through).
 * 2. Seeds animals through the API (statuses cycle available, pending, sold, none).
 * 3. Runs each scenario with autocannon: a discarded warm-up, then the measured run, and prints
 *    req/s, p50/p99 latency, errors (must be 0) and the server's peak RSS during the run.
 * 4. Stops the server, tops the database up to `--startup-rows` animals, starts it again and
 *    times start-up to the first answered request.
 *
 * Options: --duration S (10), --warmup S (3), --connections N (32), --seed N (10000),
 * --scenarios list,get,filter,deep,create (all), --startup-rows N (100000; 0 skips step 4),
 * --json FILE (also write the results as JSON), --entry FILE (another build to measure, instead
 * of dist/main.js; started from the folder above its own), --profile DIR (run the server under
 * `node --cpu-prof`, writing one .cpuprofile per server start into DIR), --floor DIR (the
 * NestJS floor to measure beside the service, ../shared/bench/baselines/nest-floor by default,
 * built there with `npm ci && npm run build`; `none` skips it).
 *
 * 5. Starts the floor's dist/main.js the same way on its own fresh database, seeds it and runs
 *    the same scenarios, so the table shows the service and the floor one under the other.
 *    The floor reads no cursor: its `deep` row is a first page.
 * A new scenario is one more entry in SCENARIOS.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Database } from 'sqlite3';
import {
  BenchContext,
  check,
  errorsOf,
  load,
  ROOT,
  Scenario,
  SCENARIOS,
  SEED_STATUSES,
  seed,
  Server,
} from './support';

interface Options {
  duration: number;
  warmup: number;
  connections: number;
  seed: number;
  scenarios: string[];
  startupRows: number;
  json?: string;
  profile?: string;
  entry: string;
  floor?: string;
}

interface Row {
  target: string;
  scenario: string;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  peakRssMb: number | null;
  serverCpuPercent: number | null;
}

function parseOptions(argv: string[]): Options {
  const options: Options = {
    duration: 10,
    warmup: 3,
    connections: 32,
    seed: 10000,
    scenarios: SCENARIOS.map((scenario) => scenario.name),
    startupRows: 100000,
    entry: join(ROOT, 'dist', 'main.js'),
    floor: join(ROOT, '..', 'shared', 'bench', 'baselines', 'nest-floor'),
  };
  const numeric: Record<string, keyof Options> = {
    '--duration': 'duration',
    '--warmup': 'warmup',
    '--connections': 'connections',
    '--seed': 'seed',
    '--startup-rows': 'startupRows',
  };
  for (let i = 0; i < argv.length; i += 2) {
    const [name, value] = [argv[i], argv[i + 1]];
    if (value === undefined) throw new Error(`${name} needs a value`);
    if (name in numeric) {
      if (!/^\d+$/.test(value)) throw new Error(`${name} must be a whole number (got "${value}")`);
      (options as unknown as Record<string, number>)[numeric[name]] = Number(value);
    } else if (name === '--scenarios') {
      options.scenarios = value.split(',').map((scenario) => scenario.trim());
      const unknown = options.scenarios.filter((name) => !SCENARIOS.some((s) => s.name === name));
      if (unknown.length > 0) throw new Error(`unknown scenario(s): ${unknown.join(', ')}`);
    } else if (name === '--json') {
      options.json = value;
    } else if (name === '--entry') {
      options.entry = resolve(value);
    } else if (name === '--profile') {
      options.profile = resolve(value);
    } else if (name === '--floor') {
      options.floor = value === 'none' ? undefined : resolve(value);
    } else {
      throw new Error(`unknown option ${name}`);
    }
  }
  if (options.seed < 100) throw new Error('--seed must be at least 100 (the filter scenario reads 100)');
  return options;
}

/** Adds rows straight into the (stopped) service's database until it holds `total` animals. */
async function topUp(databasePath: string, total: number): Promise<number> {
  const db = new Database(databasePath);
  const run = (sql: string, params: unknown[] = []) =>
    new Promise<void>((resolve, reject) =>
      db.run(sql, params, (error) => (error ? reject(error) : resolve())),
    );
  const count = await new Promise<number>((resolve, reject) =>
    db.get<{ n: number }>('SELECT COUNT(*) AS n FROM pets', (error, row) =>
      error ? reject(error) : resolve(row.n),
    ),
  );
  await run('BEGIN');
  for (let index = count; index < total; index += 100) {
    const rows = Math.min(100, total - index);
    const values = Array.from({ length: rows }, (_, offset) => {
      const status = SEED_STATUSES[(index + offset) % SEED_STATUSES.length];
      return [`Pet ${index + offset + 1}`, 1 + ((index + offset) % 10), status ?? null];
    });
    await run(
      `INSERT INTO pets (name, category_id, status) VALUES ${values.map(() => '(?, ?, ?)').join(', ')}`,
      values.flat(),
    );
  }
  await run('COMMIT');
  await new Promise<void>((resolve, reject) => db.close((error) => (error ? reject(error) : resolve())));
  return Math.max(count, total);
}

// ---------------------------------------------------------------- measuring

async function measure(
  server: Server,
  context: BenchContext,
  scenario: Scenario,
  options: Options,
  target = 'service',
): Promise<Row> {
  const warmup = await load(context, scenario, options.connections, options.warmup);
  server.resetPeakRss();
  const cpuBefore = server.cpuSeconds();
  const result = await load(context, scenario, options.connections, options.duration);
  const cpuAfter = server.cpuSeconds();
  return {
    target,
    scenario: scenario.name,
    requestsPerSecond: result.requests.total / result.duration,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    errors: errorsOf(warmup) + errorsOf(result),
    peakRssMb: server.peakRssMb(),
    serverCpuPercent:
      cpuBefore === null || cpuAfter === null ? null : ((cpuAfter - cpuBefore) / result.duration) * 100,
  };
}

function table(rows: Row[]): string {
  const header = [
    'scenario',
    'target',
    'req/s',
    'p50 ms',
    'p99 ms',
    'errors',
    'peak RSS MB',
    'server CPU',
    'CPU µs/req',
  ];
  const lines = rows.map((row) => [
    row.scenario,
    row.target,
    Math.round(row.requestsPerSecond).toLocaleString('en-US'),
    row.p50Ms.toFixed(1),
    row.p99Ms.toFixed(1),
    String(row.errors),
    row.peakRssMb === null ? 'n/a' : row.peakRssMb.toFixed(1),
    row.serverCpuPercent === null ? 'n/a' : `${Math.round(row.serverCpuPercent)}%`,
    row.serverCpuPercent === null
      ? 'n/a'
      : String(Math.round((row.serverCpuPercent * 1e4) / row.requestsPerSecond)),
  ]);
  const widths = header.map((title, column) =>
    Math.max(title.length, ...lines.map((line) => line[column].length)),
  );
  const format = (cells: string[]) =>
    cells
      .map((cell, column) => (column < 2 ? cell.padEnd(widths[column]) : cell.padStart(widths[column])))
      .join('  ');
  return [format(header), ...lines.map(format)].join('\n');
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  if (!existsSync(options.entry)) throw new Error(`${options.entry} is missing: run npm run build first`);
  const scenarios = SCENARIOS.filter((scenario) => options.scenarios.includes(scenario.name)).sort(
    (a, b) => Number(a.mutates ?? false) - Number(b.mutates ?? false),
  );
  const dir = mkdtempSync(join(tmpdir(), 'petstore-bench-'));
  const databasePath = join(dir, 'bench.sqlite');
  let server = await Server.start(options.entry, databasePath, { profileDir: options.profile });
  try {
    const { baseUrl, readyMs } = await server.ready();
    console.log(
      `petstore bench: node ${process.version}, ${options.connections} connections, ${options.duration} s per scenario after ${options.warmup} s warm-up, SQLITE_SYNCHRONOUS=${process.env.SQLITE_SYNCHRONOUS || 'FULL (default)'}`,
    );
    console.log(`started in ${readyMs.toFixed(0)} ms (empty database), server pid ${server.child.pid}`);

    const seedStart = Date.now();
    const ids = await seed(baseUrl, options.seed);
    console.log(`seeded ${options.seed} animals in ${((Date.now() - seedStart) / 1000).toFixed(1)} s`);
    const seedPeak = server.peakRssMb();
    const context: BenchContext = { baseUrl, ids };
    await check(baseUrl, ids);

    const rows: Row[] = [];
    for (const scenario of scenarios) {
      const row = await measure(server, context, scenario, options);
      rows.push(row);
      console.log(
        `  ${scenario.name.padEnd(7)} ${scenario.description}: ${Math.round(row.requestsPerSecond)} req/s`,
      );
    }
    if (seedPeak !== null) console.log(`peak RSS while seeding: ${seedPeak.toFixed(1)} MB`);

    const floorRows = await measureFloor(options, scenarios, join(dir, 'floor.sqlite'));
    const byScenario = (row: Row) => scenarios.findIndex((scenario) => scenario.name === row.scenario);
    console.log(`\n${table([...rows, ...floorRows].sort((a, b) => byScenario(a) - byScenario(b)))}`);
    if (floorRows.length > 0) {
      const ratios = rows.map((row) => {
        const floor = floorRows.find((other) => other.scenario === row.scenario);
        return `${row.scenario} ${floor ? (row.requestsPerSecond / floor.requestsPerSecond).toFixed(2) : '?'}x`;
      });
      console.log(`service / nest-floor req/s: ${ratios.join(', ')}`);
    }

    let restart: { rows: number; readyMs: number } | undefined;
    if (options.startupRows > 0) {
      await server.stop();
      const total = await topUp(databasePath, options.startupRows);
      server = await Server.start(options.entry, databasePath, { profileDir: options.profile });
      restart = { rows: total, readyMs: (await server.ready()).readyMs };
      console.log(
        `start-up to ready on ${total.toLocaleString('en-US')} animals: ${restart.readyMs.toFixed(0)} ms`,
      );
    }

    if (options.json) {
      writeFileSync(
        options.json,
        JSON.stringify({ date: new Date().toISOString(), options, rows, floorRows, restart }, null, 2),
      );
    }
    const errors = [...rows, ...floorRows].reduce((sum, row) => sum + row.errors, 0);
    if (errors > 0) {
      console.error(`FAILED: ${errors} request(s) failed or were not 2xx`);
      process.exitCode = 1;
    }
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The same scenarios against the NestJS floor (its dist/main.js on a fresh database, seeded
 * alike), or nothing when it is not built. Its rows are labelled `nest-floor`.
 */
async function measureFloor(options: Options, scenarios: Scenario[], databasePath: string): Promise<Row[]> {
  if (options.floor === undefined) return [];
  const entry = join(options.floor, 'dist', 'main.js');
  if (!existsSync(entry)) {
    console.log(`nest-floor: ${entry} is missing (build it: cd ${options.floor} && npm ci && npm run build)`);
    return [];
  }
  const floor = await Server.start(entry, databasePath);
  try {
    const { baseUrl } = await floor.ready();
    const context: BenchContext = { baseUrl, ids: await seed(baseUrl, options.seed) };
    const rows: Row[] = [];
    for (const scenario of scenarios) {
      const row = await measure(floor, context, scenario, options, 'nest-floor');
      rows.push(row);
      console.log(`  ${scenario.name.padEnd(7)} nest-floor: ${Math.round(row.requestsPerSecond)} req/s`);
    }
    return rows;
  } finally {
    await floor.stop();
  }
}

main().catch((error: unknown) => {
  console.error(`bench: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
