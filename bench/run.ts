/**
 * `npm run bench`: measures the built service (dist/main.js) the way it runs in production.
 *
 * 1. Starts `node dist/main.js` with NODE_ENV=production, a generated API key and a fresh
 *    temporary DATABASE_PATH, or with --database a fresh PostgreSQL database as DATABASE_URL
 *    (every other variable, e.g. SQLITE_SYNCHRONOUS, passes through).
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
 * NestJS floor to measure beside the service: bench/baselines/nest-floor by default, built with
 * `npm ci && npm run build` in its folder; `none` skips it), --floor-untuned (start the floor
 * without FLOOR_TUNED=1), --generated NAME (instead of all this, the comparison of a freshly
 * generated module with pets: bench/generated-module.ts), --rounds N (3; only for --generated),
 * --webhook (the service as `PROCESS_ROLE=api` beside a `worker` process; after seeding, the
 * create scenario once with no endpoint, then a webhook endpoint taking every event, its receiver
 * a local server answering 204, and a warm-up of creates for the worker: deliveries run while the
 * scenarios are measured, and the worker's CPU per delivery is printed), --database postgres://USER@HOST:PORT/DB (the
 * service and the floor each on a database of its own created on that server, DB serving only to
 * create them, and dropped at the end, also on failure or SIGINT).
 *
 * 5. Starts the floor's dist/main.js the same way on its own fresh database, seeds it and runs
 *    the same scenarios, so the table shows the service and the floor one under the other.
 *    The floor runs tuned (FLOOR_TUNED=1: Express's per-request setPrototypeOf made a no-op,
 *    which the service does too), the fair anchor. It reads no cursor: its `deep` row is a
 *    first page. When it is not built, the run says how to build it and goes on without it.
 * A new scenario is one more entry in SCENARIOS.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { compareGeneratedModule } from './generated-module';
import {
  BASELINES,
  BenchContext,
  BenchDatabases,
  check,
  cpuMicrosPerRequest,
  load,
  measure,
  messageOf,
  registerWebhook,
  ROOT,
  Row,
  runToEnd,
  Scenario,
  SCENARIOS,
  SEED_STATUSES,
  startReceiver,
  seed,
  Server,
  Storage,
  table,
  withClient,
  withoutPassword,
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
  /** Start the floor with FLOOR_TUNED=1 (the default). */
  floorTuned: boolean;
  /** The module to generate and compare with pets, instead of the usual run. */
  generated?: string;
  rounds: number;
  webhook: boolean;
  /** A PostgreSQL server (URL of a database to connect to) instead of SQLite files. */
  database?: string;
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
    floor: join(BASELINES, 'nest-floor'),
    floorTuned: true,
    rounds: 3,
    webhook: false,
  };
  const numeric: Record<string, keyof Options> = {
    '--duration': 'duration',
    '--warmup': 'warmup',
    '--connections': 'connections',
    '--seed': 'seed',
    '--startup-rows': 'startupRows',
    '--rounds': 'rounds',
  };
  for (let i = 0; i < argv.length; i++) {
    const name = argv[i];
    if (name === '--webhook') {
      options.webhook = true;
      continue;
    }
    if (name === '--floor-untuned') {
      options.floorTuned = false;
      continue;
    }
    const value = argv[++i];
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
    } else if (name === '--generated') {
      options.generated = value;
    } else if (name === '--database') {
      options.database = value;
    } else {
      throw new Error(`unknown option ${name}`);
    }
  }
  if (options.seed < 400)
    throw new Error('--seed must be at least 400 (the check reads 100 sold animals, one in four)');
  if (options.rounds < 1) throw new Error('--rounds must be at least 1');
  if (options.generated !== undefined && options.database !== undefined)
    throw new Error('--generated runs on SQLite only: leave out --database');
  return options;
}

/** Adds rows straight into the (stopped) service's database until it holds `total` animals. */
function topUp(storage: Storage, total: number): Promise<number> {
  return storage.profile === 'sqlite' ? topUpSqlite(storage.path, total) : topUpPostgres(storage.url, total);
}

function topUpSqlite(databasePath: string, total: number): Promise<number> {
  const db = new Database(databasePath);
  try {
    const { n: count } = db.prepare('SELECT COUNT(*) AS n FROM pets').get() as { n: number };
    const insert = db.prepare('INSERT INTO pets (name, category_id, status, version) VALUES (?, ?, ?, ?)');
    db.transaction(() => {
      for (let index = count; index < total; index++) {
        const status = SEED_STATUSES[index % SEED_STATUSES.length];
        insert.run(`Pet ${index + 1}`, 1 + (index % 10), status ?? null, 1);
      }
    })();
    return Promise.resolve(Math.max(count, total));
  } finally {
    db.close();
  }
}

/** The same on PostgreSQL, in one statement; in whichever schema the service made its table. */
async function topUpPostgres(url: string, total: number): Promise<number> {
  return withClient(url, async (client) => {
    const { rows } = await client.query<{ schema: string }>(
      "SELECT table_schema AS schema FROM information_schema.tables WHERE table_name = 'pets'",
    );
    if (rows.length !== 1) throw new Error(`top-up: ${rows.length} tables named pets, not one`);
    const pets = `"${rows[0].schema}".pets`;
    const count = Number((await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${pets}`)).rows[0].n);
    await client.query(
      `INSERT INTO ${pets} (name, category_id, status, version)
       SELECT 'Pet ' || n, 1 + (n - 1) % 10, ($3::text[])[1 + (n - 1) % cardinality($3::text[])], 1
       FROM generate_series($1::bigint, $2::bigint) AS n`,
      [count + 1, total, SEED_STATUSES.map((status) => status ?? null)],
    );
    return Math.max(count, total);
  });
}

const USAGE = `usage: npm run bench -- [options]   (builds, then measures dist/main.js; bench/README.md)
  --duration S (10)  --warmup S (3)  --connections N (32)  --seed N (10000)
  --scenarios ${SCENARIOS.map((scenario) => scenario.name).join(',')} (all)  --startup-rows N (100000; 0 skips)
  --json FILE  --entry FILE  --profile DIR  --floor DIR|none  --floor-untuned  --webhook  --database postgres://USER@HOST:PORT/DB
  --generated NAME [--rounds N (3)]   a generated module against pets instead`;

function main(): void {
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) {
    console.log(USAGE);
    return;
  }
  let dir: string | undefined;
  let databases: BenchDatabases | undefined;
  runToEnd(
    'bench',
    async () => {
      const options = parseOptions(args);
      if (options.generated !== undefined) {
        dir = mkdtempSync(join(tmpdir(), 'petstore-generated-'));
        return compareGeneratedModule(options.generated, options, dir);
      }
      if (!existsSync(options.entry)) throw new Error(`${options.entry} is missing: run npm run build first`);
      dir = mkdtempSync(join(tmpdir(), 'petstore-bench-'));
      databases = await BenchDatabases.open(dir, options.database);
      await bench(options, databases);
    },
    async () => {
      await databases?.drop();
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    },
  );
}

async function bench(options: Options, databases: BenchDatabases): Promise<void> {
  const scenarios = SCENARIOS.filter((scenario) => options.scenarios.includes(scenario.name)).sort(
    (a, b) => Number(a.mutates ?? false) - Number(b.mutates ?? false),
  );
  const storage = await databases.create('service');
  const receiver = options.webhook ? await startReceiver() : undefined;
  const env: Record<string, string> = receiver
    ? { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', PROCESS_ROLE: 'api' }
    : {};
  let server = await Server.start(options.entry, storage, { profileDir: options.profile, env });
  let worker: Server | undefined;
  try {
    const { baseUrl, readyMs } = await server.ready();
    console.log(
      `petstore bench: node ${process.version}, ${options.connections} connections, ${options.duration} s per scenario after ${options.warmup} s warm-up`,
    );
    console.log(`database: ${databases.describe()}`);
    console.log(`started in ${readyMs.toFixed(0)} ms (empty database), server pid ${server.child.pid}`);

    const seedStart = Date.now();
    const ids = await seed(baseUrl, options.seed);
    console.log(`seeded ${options.seed} animals in ${((Date.now() - seedStart) / 1000).toFixed(1)} s`);
    const seedPeak = server.peakRssMb();
    const context: BenchContext = { baseUrl, ids };
    await check(baseUrl, ids);

    const rows: Row[] = [];
    let bare: Row | undefined;
    if (receiver) {
      // The API's CPU per create before any endpoint exists, then with a worker delivering each.
      const create = SCENARIOS.find((scenario) => scenario.name === 'create')!;
      bare = await measure(server, context, create, options, 'service, no endpoint');
      await registerWebhook(baseUrl, receiver.url);
      worker = await Server.startWorker(options.entry, storage, { profileDir: options.profile, env });
      // Warmed up as the API is before each measured run: a cold worker's first seconds cost double.
      const warm = await load(context, create, options.connections, options.warmup);
      const deadline = Date.now() + 30_000;
      while (receiver.received() < warm['2xx'] && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 50));
    }
    for (const scenario of scenarios) {
      const [cpuBefore, receivedBefore] = [worker?.cpuSeconds() ?? 0, receiver?.received() ?? 0];
      const row = await measure(server, context, scenario, options, 'service');
      rows.push(row);
      console.log(
        `  ${scenario.name.padEnd(7)} ${scenario.description}: ${Math.round(row.requestsPerSecond)} req/s`,
      );
      const delivered = (receiver?.received() ?? 0) - receivedBefore;
      if (worker && delivered > 0) {
        // Over warm-up and run together: deliveries trail the requests that made them.
        const micros = (((worker.cpuSeconds() ?? 0) - cpuBefore) * 1e6) / delivered;
        console.log(
          `          worker: ${delivered} deliveries, ${Math.round(micros)} µs CPU per delivery, ` +
            `${Math.round(delivered / (options.warmup + options.duration))} deliveries/s`,
        );
      }
    }
    const created = rows.find((row) => row.scenario === 'create');
    if (bare && created) {
      const [without, withDeliveries] = [cpuMicrosPerRequest(bare), cpuMicrosPerRequest(created)];
      if (without !== null && withDeliveries !== null)
        console.log(
          `API CPU per create: ${Math.round(withDeliveries)} µs with a worker delivering each, ` +
            `${Math.round(without)} µs with no endpoint (${(withDeliveries / without).toFixed(2)}x)`,
        );
    }
    if (seedPeak !== null) console.log(`peak RSS while seeding: ${seedPeak.toFixed(1)} MB`);

    const floorRows = await measureFloor(options, scenarios, databases);
    const byScenario = (row: Row) => scenarios.findIndex((scenario) => scenario.name === row.scenario);
    console.log(`\n${table([...rows, ...floorRows].sort((a, b) => byScenario(a) - byScenario(b)))}`);
    if (floorRows.length > 0) {
      const ratios = rows.map((row) => {
        const floor = floorRows.find((other) => other.scenario === row.scenario);
        return `${row.scenario} ${floor ? (row.requestsPerSecond / floor.requestsPerSecond).toFixed(2) : '?'}x`;
      });
      console.log(`service / ${floorRows[0].target} req/s: ${ratios.join(', ')}`);
    }

    let restart: { rows: number; readyMs: number } | undefined;
    if (options.startupRows > 0) {
      await server.stop();
      const total = await topUp(storage, options.startupRows);
      server = await Server.start(options.entry, storage, { profileDir: options.profile });
      restart = { rows: total, readyMs: (await server.ready()).readyMs };
      console.log(
        `start-up to ready on ${total.toLocaleString('en-US')} animals: ${restart.readyMs.toFixed(0)} ms`,
      );
    }

    if (options.json) {
      writeFileSync(
        options.json,
        JSON.stringify(
          {
            date: new Date().toISOString(),
            database: databases.profile(),
            options: { ...options, database: options.database && withoutPassword(options.database) },
            rows,
            floorRows,
            restart,
          },
          null,
          2,
        ),
      );
    }
    const errors = [...rows, ...floorRows].reduce((sum, row) => sum + row.errors, 0);
    if (errors > 0) {
      console.error(`FAILED: ${errors} request(s) failed or were not 2xx`);
      process.exitCode = 1;
    }
    if (receiver) console.log(`webhook deliveries received: ${receiver.received()}`);
  } finally {
    await server.stop();
    await worker?.stop(20000);
    receiver?.server.close();
  }
}

/**
 * The same scenarios against the NestJS floor (its dist/main.js on a fresh database, seeded
 * alike), tuned unless --floor-untuned; no rows when it is not built or does not start.
 */
async function measureFloor(
  options: Options,
  scenarios: Scenario[],
  databases: BenchDatabases,
): Promise<Row[]> {
  if (options.floor === undefined) return [];
  const folder = options.floor;
  const target = options.floorTuned ? 'nest-floor tuned' : 'nest-floor untuned';
  const entry = join(folder, 'dist', 'main.js');
  // As the user would type it from here: relative inside the current folder, else absolute.
  const shown = relative(process.cwd(), folder);
  const cd = `cd ${shown.startsWith('..') ? folder : shown || '.'}`;
  if (!existsSync(entry) || !existsSync(join(folder, 'node_modules'))) {
    console.log(
      `\n${target}: not built, so not measured. Build it once with:\n  ${cd} && npm ci && npm run build`,
    );
    return [];
  }
  if (newestSource(join(folder, 'src')) > statSync(entry).mtimeMs) {
    console.log(
      `\n${target}: its dist/ is older than its src/; measuring it anyway (rebuild: ${cd} && npm run build)`,
    );
  }
  const floor = await Server.start(entry, await databases.create('floor'), {
    env: { FLOOR_TUNED: options.floorTuned ? '1' : '0' },
  });
  try {
    const { baseUrl } = await floor.ready();
    const context: BenchContext = { baseUrl, ids: await seed(baseUrl, options.seed) };
    const rows: Row[] = [];
    for (const scenario of scenarios) {
      const row = await measure(floor, context, scenario, options, target);
      rows.push(row);
      console.log(`  ${scenario.name.padEnd(7)} ${target}: ${Math.round(row.requestsPerSecond)} req/s`);
    }
    return rows;
  } catch (error) {
    console.log(`\n${target} (${folder}) could not be measured: ${messageOf(error)}`);
    return [];
  } finally {
    await floor.stop();
  }
}

/** The last modification time (ms) of any file below `folder`, 0 when there is none. */
function newestSource(folder: string): number {
  if (!existsSync(folder)) return 0;
  return Math.max(
    0,
    ...readdirSync(folder, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => statSync(join(entry.parentPath, entry.name)).mtimeMs),
  );
}

main();
