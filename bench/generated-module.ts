/**
 * `npm run bench -- --generated NAME`: what a module fresh from `npm run generate:module` costs
 * next to pets, both on the same server in the same run.
 *
 * 1. Copies the working tree (tracked and untracked files, not the ignored ones, as
 *    tools/generate-module/check.sh does) to a temporary folder and links this node_modules there.
 * 2. There: `npm run generate:module -- NAME --no-build`, then `npm run build`.
 * 3. Starts that dist/main.js (production mode, a generated key, a fresh database), seeds 2,000
 *    NAME (`POST /v1/NAME` with a name) and --seed pets through the API, and checks both.
 * 4. Runs list (`GET /v1/NAME?limit=20`), get (`GET /v1/NAME/{random seeded id}`) and create
 *    (`POST /v1/NAME`) against the same three of pets, --rounds times, NAME and pets taking turns
 *    to go first; prints the medians and, per operation, the NAME / pets ratios of req/s and of
 *    CPU time per request (the median of the rounds' ratios).
 *
 * Options of `npm run bench` that apply: --duration, --warmup, --connections, --seed,
 * --scenarios (of list, get, create), --rounds, --json.
 */
import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readlinkSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import {
  AUTH,
  BenchContext,
  check,
  cpuMicrosPerRequest,
  LoadOptions,
  measure,
  ROOT,
  Row,
  Scenario,
  SCENARIOS,
  seed,
  seedCollection,
  Server,
  table,
} from './support';

export interface GeneratedOptions extends LoadOptions {
  /** Pets to seed. */
  seed: number;
  rounds: number;
  scenarios: string[];
  json?: string;
}

/** Resources of the generated module seeded before measuring. */
const MODULE_SEED = 2000;
const COMPARED = ['list', 'get', 'create'];

/** list, get and create of a generated module's collection, as SCENARIOS has them for pets. */
function moduleScenarios(collection: string): Scenario[] {
  const path = `/v1/${collection}`;
  const body = JSON.stringify({ name: 'Bench item', description: 'Created by npm run bench' });
  return [
    {
      name: 'list',
      description: `GET ${path}?limit=20`,
      requests: () => [{ method: 'GET', path: `${path}?limit=20` }],
    },
    {
      name: 'get',
      description: `GET ${path}/{random seeded id}`,
      requests: ({ ids }) => [
        {
          method: 'GET',
          setupRequest: (request) => ({
            ...request,
            path: `${path}/${ids[Math.floor(Math.random() * ids.length)]}`,
          }),
        },
      ],
    },
    {
      name: 'create',
      description: `POST ${path}`,
      mutates: true,
      requests: () => [
        { method: 'POST', path, headers: { ...AUTH, 'content-type': 'application/json' }, body },
      ],
    },
  ];
}

/** Copies the working tree's files (what git does not ignore) to `copy`; returns how many. */
function copyWorkingTree(copy: string): number {
  const listed = spawnSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], {
    cwd: ROOT,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (listed.status !== 0) throw new Error(`git ls-files failed: ${listed.stderr}`);
  let copied = 0;
  for (const file of new Set(listed.stdout.split('\0'))) {
    if (file === '' || file === 'node_modules' || file.startsWith('node_modules/')) continue;
    const source = join(ROOT, file);
    // A tracked file deleted in the working tree is left out.
    const stat = lstatSync(source, { throwIfNoEntry: false });
    if (stat === undefined || !(stat.isFile() || stat.isSymbolicLink())) continue;
    const target = join(copy, file);
    mkdirSync(dirname(target), { recursive: true });
    if (stat.isSymbolicLink()) symlinkSync(readlinkSync(source), target);
    else copyFileSync(source, target);
    copied++;
  }
  symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'));
  return copied;
}

/** Runs `npm run -s SCRIPT -- ARGS` in `cwd`; its output only when it fails. */
function npmRun(cwd: string, script: string, args: string[] = []): void {
  const started = Date.now();
  const shown = ['npm run', script, ...(args.length > 0 ? ['--', ...args] : [])].join(' ');
  const result = spawnSync('npm', ['run', '-s', script, ...(args.length > 0 ? ['--', ...args] : [])], {
    cwd,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.status !== 0) {
    throw new Error(`${shown} failed (exit ${result.status}) in ${cwd}:\n${result.stdout}${result.stderr}`);
  }
  console.log(`${shown}: done in ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

/** The module answers list and get with what was seeded. */
async function checkModule(baseUrl: string, collection: string, ids: number[]): Promise<void> {
  const get = async (path: string): Promise<unknown> => {
    const response = await fetch(`${baseUrl}${path}`, { headers: AUTH });
    if (response.status !== 200) throw new Error(`check: GET ${path} answered ${response.status}`);
    return response.json();
  };
  const page = (await get(`/v1/${collection}?limit=20`)) as unknown[];
  if (!Array.isArray(page) || page.length !== 20) throw new Error(`check: /v1/${collection} did not list 20`);
  const last = ids[ids.length - 1];
  const one = (await get(`/v1/${collection}/${last}`)) as { id?: number };
  if (one.id !== last) throw new Error(`check: GET /v1/${collection}/${last} returned another resource`);
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

/** One row per target and scenario: the medians of its rounds, errors summed, the highest RSS. */
function summary(rows: Row[]): Row {
  const rss = rows.map((row) => row.peakRssMb).filter((value) => value !== null);
  const cpu = rows.map((row) => row.serverCpuPercent).filter((value) => value !== null);
  return {
    target: rows[0].target,
    scenario: rows[0].scenario,
    requestsPerSecond: median(rows.map((row) => row.requestsPerSecond)),
    p50Ms: median(rows.map((row) => row.p50Ms)),
    p99Ms: median(rows.map((row) => row.p99Ms)),
    errors: rows.reduce((sum, row) => sum + row.errors, 0),
    peakRssMb: rss.length > 0 ? Math.max(...rss) : null,
    serverCpuPercent: cpu.length === rows.length ? median(cpu) : null,
  };
}

/** `copy`: an empty folder for the copy of the working tree, which the caller removes. */
export async function compareGeneratedModule(
  name: string,
  options: GeneratedOptions,
  copy: string,
): Promise<void> {
  const compared = COMPARED.filter((scenario) => options.scenarios.includes(scenario));
  if (compared.length === 0) throw new Error(`--generated compares ${COMPARED.join(', ')}: none was chosen`);
  let server: Server | undefined;
  try {
    console.log(`${copyWorkingTree(copy)} files of the working tree copied to ${copy}`);
    if (existsSync(join(copy, 'src', name)))
      throw new Error(`src/${name} exists already: choose another name`);
    npmRun(copy, 'generate:module', [name, '--no-build']);
    npmRun(copy, 'build');

    server = await Server.start(join(copy, 'dist', 'main.js'), {
      profile: 'sqlite',
      path: join(copy, 'bench.sqlite'),
    });
    const { baseUrl, readyMs } = await server.ready();
    console.log(
      `generated ${name} beside pets: node ${process.version}, ${options.connections} connections, ` +
        `${options.rounds} round(s) of ${options.duration} s after ${options.warmup} s warm-up per side and operation; ` +
        `started in ${readyMs.toFixed(0)} ms, server pid ${server.child.pid}`,
    );
    const moduleIds = await seedCollection(baseUrl, name, MODULE_SEED, 64, (index) => ({
      name: `${name} ${index + 1}`,
    }));
    const petIds = await seed(baseUrl, options.seed);
    console.log(`seeded ${MODULE_SEED} ${name} and ${options.seed} pets`);
    await checkModule(baseUrl, name, moduleIds);
    await check(baseUrl, petIds);

    const sides: { target: string; context: BenchContext; scenarios: Scenario[] }[] = [
      { target: name, context: { baseUrl, ids: moduleIds }, scenarios: moduleScenarios(name) },
      { target: 'pets', context: { baseUrl, ids: petIds }, scenarios: SCENARIOS },
    ];
    const rows: Row[] = [];
    const ratios: string[] = [];
    for (const scenarioName of compared) {
      const runs: Row[][] = [[], []];
      for (let round = 0; round < options.rounds; round++) {
        // Each side goes first in every other round, so neither always meets a warmer machine.
        const order = round % 2 === 0 ? [0, 1] : [1, 0];
        for (const index of order) {
          const side = sides[index];
          const scenario = side.scenarios.find((candidate) => candidate.name === scenarioName);
          if (scenario === undefined) throw new Error(`no ${scenarioName} scenario for ${side.target}`);
          const row = await measure(server, side.context, scenario, options, side.target);
          runs[index].push(row);
          console.log(
            `  ${scenarioName.padEnd(6)} round ${round + 1} ${side.target.padEnd(12)} ${Math.round(row.requestsPerSecond)} req/s, ` +
              `${Math.round(cpuMicrosPerRequest(row) ?? 0)} µs CPU/req, ${row.errors} errors`,
          );
        }
      }
      rows.push(summary(runs[0]), summary(runs[1]));
      const ratio = (value: (row: Row) => number | null): string => {
        const perRound = runs[0].map((row, round) => [value(row), value(runs[1][round])]);
        if (perRound.some(([a, b]) => a === null || b === null)) return 'n/a';
        return `${median(perRound.map(([a, b]) => a! / b!)).toFixed(2)}x`;
      };
      ratios.push(
        `${scenarioName.padEnd(6)} req/s ${ratio((row) => row.requestsPerSecond)}, ` +
          `CPU per request ${ratio(cpuMicrosPerRequest)}`,
      );
    }
    console.log(`\n${table(rows)}`);
    console.log(`\n${name} / pets (median of the rounds' ratios):\n  ${ratios.join('\n  ')}`);

    if (options.json) {
      writeFileSync(
        options.json,
        JSON.stringify({ date: new Date().toISOString(), generated: name, options, rows, ratios }, null, 2),
      );
    }
    const errors = rows.reduce((sum, row) => sum + row.errors, 0);
    if (errors > 0) {
      console.error(`FAILED: ${errors} request(s) failed or were not 2xx`);
      process.exitCode = 1;
    }
  } finally {
    await server?.stop();
  }
}
