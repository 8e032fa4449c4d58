/** What `npm run bench` and `npm run bench:compare` share: the server process, seeding, scenarios. */
import autocannon from 'autocannon';
import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { AddressInfo, createServer } from 'node:net';
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { Client } from 'pg';
import { encodeCursor } from '../src/common/pagination/cursor';

export const ROOT = join(__dirname, '..');
/** The baselines the service is compared with, each an app of its own (bench/baselines/README.md). */
export const BASELINES = join(ROOT, 'bench', 'baselines');
export const API_KEY = `bench-${randomBytes(16).toString('hex')}`;
export const AUTH = { authorization: `Bearer ${API_KEY}` };
export const SEED_STATUSES = ['available', 'pending', 'sold', undefined] as const;
const CREATE_BODY = JSON.stringify({ name: 'Bench Pet', categoryId: 7, status: 'available' });

/** What a scenario may use to build its requests. */
export interface BenchContext {
  baseUrl: string;
  /** Ids of the seeded animals, in the order they were created. */
  ids: number[];
}

export interface Scenario {
  name: string;
  description: string;
  /** Runs after every read-only scenario, because it grows the database. */
  mutates?: boolean;
  /** autocannon options for this scenario (url, connections, duration and headers are added). */
  requests(context: BenchContext): autocannon.Options['requests'] | Promise<autocannon.Options['requests']>;
}

export const SCENARIOS: Scenario[] = [
  {
    name: 'list',
    description: 'GET /v1/pets?limit=20',
    requests: () => [{ method: 'GET', path: '/v1/pets?limit=20' }],
  },
  {
    name: 'get',
    description: 'GET /v1/pets/{random seeded id}',
    requests: ({ ids }) => [
      {
        method: 'GET',
        setupRequest: (request) => ({
          ...request,
          path: `/v1/pets/${ids[Math.floor(Math.random() * ids.length)]}`,
        }),
      },
    ],
  },
  {
    name: 'filter',
    description: 'GET /v1/pets?status=sold&limit=100',
    requests: () => [{ method: 'GET', path: '/v1/pets?status=sold&limit=100' }],
  },
  {
    name: 'deep',
    description: 'GET /v1/pets?limit=20&cursor=<the last page, 10,000 animals deep>',
    // The last page by id, whatever order the concurrent seeding answered in: the one page a read
    // cache never keeps (creates add to it), so every run measures the same read.
    requests: ({ ids }) => [
      {
        method: 'GET',
        path: `/v1/pets?limit=20&cursor=${encodeCursor({ afterId: Math.max(...ids) - 20, filter: null })}`,
      },
    ],
  },
  {
    name: 'change',
    description:
      'GET /v1/pets/{random seeded id}, and one request in ten a PATCH of the next seeded id (If-Match: *)',
    mutates: true,
    requests: ({ ids }) => {
      let sent = 0;
      // The PATCHes take the seeded ids in turn, so no two in flight meet on one record: each is
      // a change, never a lost race (on PostgreSQL the floor answers one with 412).
      const first = Math.floor(Math.random() * ids.length);
      return [
        {
          setupRequest: (request) => {
            if (++sent % 10 !== 0) {
              return {
                ...request,
                method: 'GET',
                path: `/v1/pets/${ids[Math.floor(Math.random() * ids.length)]}`,
              };
            }
            return {
              ...request,
              method: 'PATCH',
              path: `/v1/pets/${ids[(first + sent / 10) % ids.length]}`,
              headers: {
                ...request.headers,
                'content-type': 'application/merge-patch+json',
                'if-match': '*',
              },
              body: JSON.stringify({ name: `Bench Pet ${sent}` }),
            };
          },
        },
      ];
    },
  },
  {
    name: 'create',
    description: 'POST /v1/pets',
    mutates: true,
    requests: () => [
      {
        method: 'POST',
        path: '/v1/pets',
        headers: { ...AUTH, 'content-type': 'application/json' },
        body: CREATE_BODY,
      },
    ],
  },
];

// ---------------------------------------------------------------- databases

/** The fresh database of one server: a SQLite file, or a PostgreSQL database the run created. */
export type Storage = { profile: 'sqlite'; path: string } | { profile: 'postgres'; url: string };

/** The database profile of a run, as `--json` records it; never a password. */
export type DatabaseProfile =
  | { profile: 'sqlite'; sqliteSynchronous: string }
  | { profile: 'postgres'; server: string; version: string; databases: string[] };

/**
 * The variables that point a server at `storage` and at nothing else. The service reads
 * DATABASE_PATH, or DATABASE_URL (or DB_TYPE=postgres and DB_*), also from `.env`, where set
 * variables win: set empty, they count as unset. The floor reads DATABASE_PATH or FLOOR_DB_URL.
 */
function storageEnv(storage: Storage): Record<string, string> {
  return storage.profile === 'sqlite'
    ? { DATABASE_PATH: storage.path, DATABASE_URL: '', DB_TYPE: '', FLOOR_DB_URL: '' }
    : { DATABASE_URL: storage.url, DB_TYPE: '', FLOOR_DB_URL: storage.url };
}

/** `url` without its password, for printing. */
export function withoutPassword(url: string): string {
  const shown = new URL(url);
  shown.password = '';
  return shown.toString();
}

/** One connection to `url` for `work`, closed after it. */
export async function withClient<T>(url: string, work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 10000 });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * The databases of one run, one per server: SQLite files in `dir`, or, given a PostgreSQL URL,
 * databases created on that server (`petstore_bench_<random>_<label>`) and dropped by `drop()`.
 * The URL's own database serves only the CREATE and DROP DATABASE statements: the run writes to
 * no database it did not create.
 */
export class BenchDatabases {
  private readonly run = randomBytes(4).toString('hex');
  /** Databases created and not dropped yet; a name is added once its CREATE has succeeded. */
  private readonly created: string[] = [];
  /** The CREATE in flight, which `drop()` waits for. */
  private creating: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly dir: string,
    private readonly adminUrl?: string,
    private readonly version?: string,
  ) {}

  /** SQLite files in `dir`, or databases on the PostgreSQL server of `url` (checked here). */
  static async open(dir: string, url?: string): Promise<BenchDatabases> {
    if (url === undefined) return new BenchDatabases(dir);
    if (!URL.canParse(url) || !['postgres:', 'postgresql:'].includes(new URL(url).protocol)) {
      throw new Error('--database must be a URL like postgres://user@host:5432/postgres');
    }
    const version = await withClient(url, async (client) => {
      const { rows } = await client.query<{ server_version: string }>('SHOW server_version');
      return rows[0].server_version;
    }).catch((error: unknown) => {
      throw new Error(`--database: cannot connect to ${withoutPassword(url)}: ${messageOf(error)}`);
    });
    return new BenchDatabases(dir, url, version);
  }

  /** One line for the header of a run. */
  describe(): string {
    if (this.adminUrl === undefined)
      return `SQLite, SQLITE_SYNCHRONOUS=${process.env.SQLITE_SYNCHRONOUS || 'FULL (default)'}`;
    const { username, host } = new URL(this.adminUrl);
    return `PostgreSQL ${this.version} at ${username ? `${username}@` : ''}${host}, a fresh database per server (petstore_bench_${this.run}_*, dropped at the end)`;
  }

  profile(): DatabaseProfile {
    if (this.adminUrl === undefined)
      return { profile: 'sqlite', sqliteSynchronous: process.env.SQLITE_SYNCHRONOUS || 'FULL' };
    const { username, host } = new URL(this.adminUrl);
    return {
      profile: 'postgres',
      server: `${username ? `${username}@` : ''}${host}`,
      version: this.version ?? '',
      databases: [...this.created],
    };
  }

  /** A fresh, empty database for the server `label` names (lower-case letters and digits). */
  async create(label: string): Promise<Storage> {
    if (this.adminUrl === undefined) return { profile: 'sqlite', path: join(this.dir, `${label}.sqlite`) };
    const name = `petstore_bench_${this.run}_${label}`;
    const created = withClient(this.adminUrl, (client) => client.query(`CREATE DATABASE "${name}"`)).then(
      () => void this.created.push(name),
    );
    this.creating = created.catch(() => undefined);
    await created;
    const url = new URL(this.adminUrl);
    url.pathname = `/${name}`;
    return { profile: 'postgres', url: url.toString() };
  }

  /** Drops every database `create` made (the servers stopped first); again after a failure. */
  async drop(): Promise<void> {
    await this.creating;
    if (this.adminUrl === undefined || this.created.length === 0) return;
    try {
      await withClient(this.adminUrl, async (client) => {
        while (this.created.length > 0) {
          const name = this.created[0];
          // A connection still open (a server that had to be killed) would keep it: closed first.
          await client.query(
            'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
            [name],
          );
          await client.query(`DROP DATABASE IF EXISTS "${name}"`);
          this.created.shift();
        }
      });
    } catch (error) {
      throw new Error(
        `could not drop ${this.created.join(', ')} on ${withoutPassword(this.adminUrl)} (drop by hand): ${messageOf(error)}`,
      );
    }
  }
}

export const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/**
 * Runs `work`, then stops every server still running and runs `cleanup`, once, also when `work`
 * fails or the run is interrupted: on SIGINT or SIGTERM it stops the servers, cleans up and exits
 * 130 (143). A failure prints `name: message` and exits 1.
 */
export function runToEnd(name: string, work: () => Promise<void>, cleanup: () => Promise<void>): void {
  let done: Promise<void> | undefined;
  const end = (graceMs?: number) =>
    (done ??= Server.stopAll(graceMs)
      .then(cleanup)
      .catch((error: unknown) => {
        console.error(`${name}: ${messageOf(error)}`);
        process.exitCode = 1;
      }));
  let interrupted = false;
  const interrupt = (signal: NodeJS.Signals) => {
    if (interrupted) return;
    interrupted = true;
    console.error(`\n${name}: ${signal}: stopping the servers and removing what the run created`);
    void end(1000).finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  };
  process.on('SIGINT', interrupt);
  process.on('SIGTERM', interrupt);
  void work().then(
    () => end(),
    async (error: unknown) => {
      // After an interrupt, failures are its consequences, and `interrupt` exits.
      if (interrupted) return;
      console.error(`${name}: ${messageOf(error)}`);
      await end();
      process.exit(1);
    },
  );
}

// ---------------------------------------------------------------- the server process

export interface StartOptions {
  /** Run under `node --cpu-prof`, writing the profile into this folder at exit. */
  profileDir?: string;
  /** Pin the server to the last CPU (see `canPin`). */
  pin?: boolean;
  /** Flags for node, before the entry point. */
  nodeArgs?: string[];
  /** Variables set for the server on top of this process's environment and the ones below. */
  env?: Record<string, string>;
}

/** A loopback port nothing listens on right now. */
async function freePort(): Promise<number> {
  const probe = createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as AddressInfo;
  probe.close();
  await once(probe, 'close');
  return port;
}

/** True where `taskset` exists and there are at least two CPUs (one for the load generator). */
export function canPin(): boolean {
  return cpus().length >= 2 && spawnSync('taskset', ['-V']).status === 0;
}

export class Server {
  /** Servers started and not yet exited, for `stopAll`. */
  private static readonly running = new Set<Server>();
  /** Set by `stopAll`: no server starts after it. */
  private static closed = false;
  readonly startedAt = process.hrtime.bigint();
  private output = '';

  private constructor(
    readonly child: ChildProcess,
    private readonly profiling: boolean,
    private readonly port: number,
  ) {
    const collect = (chunk: Buffer) => (this.output = (this.output + chunk.toString()).slice(-20000));
    child.stdout!.on('data', collect);
    child.stderr!.on('data', collect);
  }

  /**
   * Starts the entry point with node itself (no wrapper), so that its pid is the process that
   * serves. `pin` runs it on the last CPU through `taskset` (which execs, keeping the pid).
   */
  static async start(
    entry: string,
    storage: Storage,
    { profileDir, pin, nodeArgs = [], env = {} }: StartOptions = {},
  ): Promise<Server> {
    // A port chosen here, not read from the output: in production the start line is a log
    // line, which LOG_LEVEL=warn leaves out.
    const port = await freePort();
    if (Server.closed) throw new Error('the run is ending: no server starts');
    // A profile is written on a normal exit only; Nest re-raises SIGTERM, so SIGUSR2 exits.
    const profiling = profileDir
      ? [
          '--cpu-prof',
          `--cpu-prof-dir=${profileDir}`,
          '--import=data:text/javascript,process.on("SIGUSR2",()=>process.exit(0))',
        ]
      : [];
    const command = [process.execPath, ...nodeArgs, ...profiling, entry];
    if (pin) command.unshift('taskset', '-c', String(cpus().length - 1));
    const child = spawn(command[0], command.slice(1), {
      cwd: dirname(dirname(entry)),
      env: {
        ...process.env,
        NODE_ENV: 'production',
        HOST: '127.0.0.1',
        PORT: String(port),
        API_KEYS: API_KEY,
        ...storageEnv(storage),
        // As the wrk harness sets them (bench/README.md): quiet logs, no rate limits while measuring.
        LOG_LEVEL: 'warn',
        RATE_LIMIT_ENABLED: 'false',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const server = new Server(child, profileDir !== undefined, port);
    Server.running.add(server);
    child.once('exit', () => Server.running.delete(server));
    return server;
  }

  /** Stops every server still running (`stop(graceMs)`), and any start from now on fails. */
  static async stopAll(graceMs?: number): Promise<void> {
    Server.closed = true;
    await Promise.all([...Server.running].map((server) => server.stop(graceMs)));
  }

  /** Waits until the service answers an authenticated list; the base URL and ms since spawn. */
  async ready(timeoutMs = 60000): Promise<{ baseUrl: string; readyMs: number }> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (this.child.exitCode !== null) throw new Error(`the service exited:\n${this.output}`);
      const baseUrl = `http://127.0.0.1:${this.port}`;
      const response = await fetch(`${baseUrl}/v1/pets`, { headers: AUTH }).catch(() => undefined);
      if (response?.status === 200) {
        await response.arrayBuffer();
        return { baseUrl, readyMs: Number(process.hrtime.bigint() - this.startedAt) / 1e6 };
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    throw new Error(`the service did not get ready in ${timeoutMs} ms:\n${this.output}`);
  }

  /**
   * Starts the entry point as a delivery worker (`PROCESS_ROLE=worker`) on `storage`, and waits
   * until its readiness probe on HEALTH_PORT answers.
   */
  static async startWorker(
    entry: string,
    storage: Storage,
    { env = {}, ...options }: StartOptions = {},
  ): Promise<Server> {
    const healthPort = await freePort();
    const worker = await Server.start(entry, storage, {
      ...options,
      env: { ...env, PROCESS_ROLE: 'worker', HEALTH_PORT: String(healthPort) },
    });
    const deadline = Date.now() + 60000;
    while (Date.now() < deadline) {
      if (worker.child.exitCode !== null) throw new Error(`the worker exited:\n${worker.output}`);
      const res = await fetch(`http://127.0.0.1:${healthPort}/health/ready`).catch(() => undefined);
      if (res?.status === 200) return worker;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`the worker did not get ready:\n${worker.output}`);
  }

  /** Resets the kernel's peak-RSS mark (Linux), so the next reading is the peak since now. */
  resetPeakRss(): void {
    const file = `/proc/${this.child.pid}/clear_refs`;
    if (existsSync(file)) writeFileSync(file, '5');
  }

  /** VmHWM of the server process in MiB, or null where /proc is not available. */
  peakRssMb(): number | null {
    const status = this.procFile('status');
    const kib = status && /^VmHWM:\s+(\d+) kB/m.exec(status)?.[1];
    return kib ? Number(kib) / 1024 : null;
  }

  /** CPU seconds (user + system) the server has used so far, or null without /proc. */
  cpuSeconds(): number | null {
    const stat = this.procFile('stat');
    if (!stat) return null;
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  }

  /** SIGTERM (SIGUSR2 when profiling), and SIGKILL if it has not exited `graceMs` later. */
  async stop(graceMs = 5000): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = once(this.child, 'exit');
    this.child.kill(this.profiling ? 'SIGUSR2' : 'SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  }

  private procFile(name: string): string | null {
    try {
      return readFileSync(`/proc/${this.child.pid}/${name}`, 'utf8');
    } catch {
      return null;
    }
  }
}

// ---------------------------------------------------------------- seeding and checks

/** Animals through the API (statuses cycle available, pending, sold, none); their ids in order. */
export function seed(baseUrl: string, count: number, concurrency = 64): Promise<number[]> {
  return seedCollection(baseUrl, 'pets', count, concurrency, (index) => ({
    name: `Pet ${index + 1}`,
    categoryId: 1 + (index % 10),
    status: SEED_STATUSES[index % SEED_STATUSES.length],
  }));
}

/** `count` resources created through `POST /v1/<collection>` with the bodies of `bodyOf`; their ids. */
export async function seedCollection(
  baseUrl: string,
  collection: string,
  count: number,
  concurrency: number,
  bodyOf: (index: number) => object,
): Promise<number[]> {
  const ids: number[] = new Array<number>(count);
  let next = 0;
  async function worker(): Promise<void> {
    while (next < count) {
      const index = next++;
      const response = await fetch(`${baseUrl}/v1/${collection}`, {
        method: 'POST',
        headers: { ...AUTH, 'content-type': 'application/json' },
        body: JSON.stringify(bodyOf(index)),
      });
      const body = (await response.json()) as { id?: number };
      if (response.status !== 201 || typeof body.id !== 'number') {
        throw new Error(
          `seeding: POST /v1/${collection} answered ${response.status} ${JSON.stringify(body)}`,
        );
      }
      ids[index] = body.id;
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, () => worker()));
  return ids;
}

/** The scenarios are only meaningful if the service does the work they stand for. */
export async function check(baseUrl: string, ids: number[]): Promise<void> {
  const get = async (path: string): Promise<unknown> => {
    const response = await fetch(`${baseUrl}${path}`, { headers: AUTH });
    if (response.status !== 200) throw new Error(`check: GET ${path} answered ${response.status}`);
    return response.json();
  };
  const list = (await get('/v1/pets?limit=20')) as Array<{ id: number }>;
  const sold = (await get('/v1/pets?status=sold&limit=100')) as Array<{ status?: string }>;
  const one = (await get(`/v1/pets/${ids[ids.length - 1]}`)) as { id: number };
  if (list.length !== 20) throw new Error(`check: list returned ${list.length} animals, not 20`);
  if (sold.length !== 100 || sold.some((pet) => pet.status !== 'sold')) {
    throw new Error('check: the filter did not return 100 sold animals');
  }
  if (one.id !== ids[ids.length - 1]) throw new Error('check: get returned another animal');
}

// ---------------------------------------------------------------- load

/** One autocannon run of a scenario. */
export async function load(
  context: BenchContext,
  scenario: Scenario,
  connections: number,
  seconds: number,
): Promise<autocannon.Result> {
  return autocannon({
    url: context.baseUrl,
    connections,
    duration: seconds,
    headers: AUTH,
    requests: await scenario.requests(context),
  });
}

/** Failed requests: socket errors, timeouts and answers that were not 2xx. */
export function errorsOf(result: autocannon.Result): number {
  return result.errors + result.timeouts + result.non2xx;
}

// ---------------------------------------------------------------- measuring and the table

export interface LoadOptions {
  connections: number;
  /** Seconds of the discarded run before each measured one. */
  warmup: number;
  /** Seconds of each measured run. */
  duration: number;
}

/** One measured run. */
export interface Row {
  target: string;
  scenario: string;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  peakRssMb: number | null;
  serverCpuPercent: number | null;
}

/** A warm-up, then the measured run, with the server's peak RSS and CPU during the latter. */
export async function measure(
  server: Server,
  context: BenchContext,
  scenario: Scenario,
  options: LoadOptions,
  target: string,
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

/** The server's CPU time per answered request, in µs, or null without /proc. */
export function cpuMicrosPerRequest(row: Row): number | null {
  return row.serverCpuPercent === null ? null : (row.serverCpuPercent * 1e4) / row.requestsPerSecond;
}

export function table(rows: Row[]): string {
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
  const lines = rows.map((row) => {
    const cpuPerRequest = cpuMicrosPerRequest(row);
    return [
      row.scenario,
      row.target,
      Math.round(row.requestsPerSecond).toLocaleString('en-US'),
      row.p50Ms.toFixed(1),
      row.p99Ms.toFixed(1),
      String(row.errors),
      row.peakRssMb === null ? 'n/a' : row.peakRssMb.toFixed(1),
      row.serverCpuPercent === null ? 'n/a' : `${Math.round(row.serverCpuPercent)}%`,
      cpuPerRequest === null ? 'n/a' : String(Math.round(cpuPerRequest)),
    ];
  });
  const widths = header.map((title, column) =>
    Math.max(title.length, ...lines.map((line) => line[column].length)),
  );
  const format = (cells: string[]) =>
    cells
      .map((cell, column) => (column < 2 ? cell.padEnd(widths[column]) : cell.padStart(widths[column])))
      .join('  ');
  return [format(header), ...lines.map(format)].join('\n');
}

/** A receiver that answers every delivery 204 at once, counting them. */
export async function startReceiver() {
  let received = 0;
  const server = createHttpServer((req, res) => {
    req.resume().on('end', () => {
      received++;
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${port}/hook`, received: () => received };
}

/** Subscribes `url` to every event; false where the build has no webhooks (404). */
export async function registerWebhook(baseUrl: string, url: string): Promise<boolean> {
  const res = await fetch(`${baseUrl}/v1/webhook-endpoints`, {
    method: 'POST',
    headers: { ...AUTH, 'content-type': 'application/json' },
    body: JSON.stringify({ url }),
  });
  if (res.status === 404) return false;
  if (res.status !== 201)
    throw new Error(`registering the webhook answered ${res.status}: ${await res.text()}`);
  return true;
}
