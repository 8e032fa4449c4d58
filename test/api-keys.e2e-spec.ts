import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { LoggerService } from '@nestjs/common';
import { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import type { App } from 'supertest/types';
import { VERIFY_CACHE_MS } from '../src/auth/api-keys.service';
import { describeDatabase, loadConfig } from '../src/config/app-config';
import { createApp } from '../src/app/setup-app';
import { tempDir, TEST_KEY, testDatabaseEnv } from './support/app';
import { apikey } from './support/apikey';
import { captureLogs, CapturedLogs } from './support/logs';
import { apikeyProcess, exitOf, launchService, spawnService, stopService } from './support/process';

const run = promisify(execFile);
const ROOT = join(__dirname, '..');
const KEY_PATTERN = /pet_[A-Za-z0-9_-]{43}/;

// `apikey` runs the CLI in this process, on a database connection of its own; `apikeyProcess`
// and the npm script run its entry point as a process of its own.

/** Collects everything the app logs, at every level. */
class CapturingLogger implements LoggerService {
  readonly lines: string[] = [];
  private record = (...parts: unknown[]) => this.lines.push(parts.map((part) => String(part)).join(' '));
  log = this.record;
  error = this.record;
  warn = this.record;
  debug = this.record;
  verbose = this.record;
  fatal = this.record;
}

describe('Stored API keys (e2e: the CLI, the real app, one SQLite file)', () => {
  let dir: ReturnType<typeof tempDir>;
  let database: Record<string, string>;
  let app: NestExpressApplication;
  let http: App;
  let logger: CapturingLogger;
  let requestLogs: CapturedLogs;

  beforeAll(async () => {
    dir = tempDir();
    database = testDatabaseEnv(join(dir.path, 'petstore.sqlite'));
    logger = new CapturingLogger();
    requestLogs = captureLogs();
    // API_KEYS is set too: environment keys and stored keys work side by side.
    const config = loadConfig({ ...database, API_KEYS: TEST_KEY, LOG_LEVEL: 'trace' });
    app = await createApp(config, { logger, logDestination: requestLogs.stream });
    await app.init();
    http = app.getHttpServer();
  });

  afterAll(async () => {
    await app.close();
    dir.cleanup();
  });

  const status = async (key: string) =>
    (await request(http).get('/v1/pets').set('Authorization', `Bearer ${key}`)).status;

  it('create → use → revoke → 401, while the environment key keeps working', async () => {
    const created = await apikey(database, 'create', '--name', 'mobile-app');
    expect(created.code).toBe(0);
    const key = KEY_PATTERN.exec(created.stdout)?.[0];
    expect(key).toBeDefined();
    expect(created.stdout).toContain('"mobile-app"');

    expect(await status(key!)).toBe(200);
    expect(await status(TEST_KEY)).toBe(200);

    const listed = await apikey(database, 'list');
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain('mobile-app');
    expect(listed.stdout).toContain(key!.slice(0, 12));
    expect(listed.stdout).not.toContain(key);

    const revoked = await apikey(database, 'revoke', key!.slice(0, 12));
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toMatch(/^Revoked API key \d+ "mobile-app"/);

    // Revoked through another connection, as the CLI's process does: this instance refuses it
    // within the cache window.
    await new Promise((resolve) => setTimeout(resolve, VERIFY_CACHE_MS + 100));
    const refused = await request(http).get('/v1/pets').set('Authorization', `Bearer ${key}`);
    expect(refused.status).toBe(401);
    expect(refused.headers['www-authenticate']).toBe('Bearer realm="petstore", error="invalid_token"');
    expect(await status(TEST_KEY)).toBe(200);

    const afterRevoke = JSON.parse((await apikey(database, 'list', '--json')).stdout) as Array<{
      name: string;
      revokedAt: string | null;
      lastUsedAt: string | null;
    }>;
    const record = afterRevoke.find((entry) => entry.name === 'mobile-app')!;
    expect(record.revokedAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(record.lastUsedAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(JSON.stringify(afterRevoke)).not.toContain(key);
  });

  it('revoking one key leaves the others working', async () => {
    const first = KEY_PATTERN.exec((await apikey(database, 'create', '--name', 'one')).stdout)![0];
    const second = KEY_PATTERN.exec((await apikey(database, 'create', '--name', 'two')).stdout)![0];
    expect(await status(first)).toBe(200);
    const listed = JSON.parse((await apikey(database, 'list', '--json')).stdout) as Array<{
      id: number;
      name: string;
    }>;
    const id = listed.find((entry) => entry.name === 'one')!.id;
    expect((await apikey(database, 'revoke', String(id))).code).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, VERIFY_CACHE_MS + 100));
    expect(await status(first)).toBe(401);
    expect(await status(second)).toBe(200);
  });

  it('create with scopes and an expiry, then rotate: the scopes hold, both secrets work in the grace', async () => {
    const created = await apikey(
      database,
      'create',
      '--name',
      'dashboard',
      '--scopes',
      'pets:read',
      '--expires-in',
      '30d',
    );
    expect(created).toMatchObject({ code: 0, stderr: expect.not.stringContaining('error') as string });
    expect(created.stdout).toMatch(/"dashboard" \(prefix pet_.{8}, expires \d{4}-\d\d-\d\dT/);
    const old = KEY_PATTERN.exec(created.stdout)![0];
    const adding = () =>
      request(http).post('/v1/pets').set('Authorization', `Bearer ${old}`).send({ name: 'Rex' });
    expect(await status(old)).toBe(200);
    expect((await adding()).status).toBe(403);

    const listed = JSON.parse((await apikey(database, 'list', '--json')).stdout) as Array<
      Record<string, unknown>
    >;
    expect(listed.find((key) => key.name === 'dashboard')).toMatchObject({
      scopes: ['pets:read'],
      expiresAt: expect.stringMatching(/^\d{4}-/) as string,
    });

    const rotated = await apikey(database, 'rotate', old.slice(0, 12), '--grace', '1h');
    expect(rotated.code).toBe(0);
    expect(rotated.stdout).toMatch(/^Rotated API key \d+ "dashboard"/);
    expect(rotated.stdout).toMatch(/The old secret works until \d{4}-/);
    const fresh = KEY_PATTERN.exec(rotated.stdout)![0];
    expect(fresh).not.toBe(old);
    expect([await status(old), await status(fresh)]).toEqual([200, 200]);
  });

  it.each([
    [['create', '--name', 'x', '--scopes', 'pets'], 1, '"pets" is not a scope'],
    ...['foo:read', 'pets:manage'].map((scope): [string[], number, string] => [
      ['create', '--name', 'x', '--scopes', `pets:read,${scope}`],
      1,
      `apikey: "${scope}" is not a scope of this service: use audit:read, events:read, keys:manage, pets:read, pets:write, webhooks:manage\n`,
    ]),
    [
      ['create', '--name', 'x', '--expires-in', '1y'],
      2,
      '--expires-in takes a number of days, hours or minutes',
    ],
    [['rotate', '1', '--grace', '8d'], 1, 'the grace period must be from 0 to 7 days'],
  ])('refuses %j in one line', async (args, code, message) => {
    const result = await apikey(database, ...args);
    expect(result.code).toBe(code);
    expect(result.stderr).toContain(message);
  });

  it('no key, stored or from the environment, ever appears in the logs', () => {
    expect(logger.lines.length).toBeGreaterThan(0);
    expect(requestLogs.lines().length).toBeGreaterThan(0);
    const logs = [...logger.lines, requestLogs.text()].join('\n');
    expect(logs).not.toMatch(KEY_PATTERN);
    expect(logs).not.toContain(TEST_KEY);
  });
});

describe('apikey CLI errors', () => {
  let dir: ReturnType<typeof tempDir>;
  let database: Record<string, string>;

  beforeAll(async () => {
    dir = tempDir();
    database = testDatabaseEnv(join(dir.path, 'cli.sqlite'));
    expect((await apikey(database, 'list', '--init')).code).toBe(0);
  });
  afterAll(() => dir.cleanup());

  it.each([
    [['revoke', '424242'], 1, /^apikey: no API key matches the id or prefix "424242"$/m],
    [['revoke', 'pet_nothing'], 1, /^apikey: no API key matches the id or prefix "pet_nothing"$/m],
    [['create'], 2, /^apikey: create needs --name <client>/m],
    [['create', '--name', '   '], 1, /^apikey: the name must be 1 to 100 characters/m],
    [['create', '--name', 'x', '--admin'], 2, /^apikey: Unknown option '--admin'/m],
    [['revoke'], 2, /^apikey: revoke needs exactly one <id\|prefix>$/m],
    [['frobnicate'], 2, /^apikey: unknown command "frobnicate"$/m],
    [['revoke', 'pet_ab'], 1, /^apikey: a prefix needs at least 8 characters .*, or use the id$/m],
    [[], 2, /^usage: npm run apikey -- <command> \[--init\]$/m],
  ])('apikey %p exits %i with a clear message', async (args, code, message) => {
    const result = await apikey(database, ...args);
    expect(result.code).toBe(code);
    expect(result.stderr).toMatch(message);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it('refuses an in-memory database', async () => {
    const result = await apikey({ DATABASE_PATH: ':memory:' }, 'list');
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/:memory:/);
  });

  it('exits with the status the CLI returns, its message on stderr (real process)', async () => {
    const result = await apikeyProcess(database, 'frobnicate');
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr.split('\n').slice(0, 3)).toEqual([
      `apikey: database ${describeDatabase(loadConfig(database).database)}`,
      'apikey: unknown command "frobnicate"',
      'usage: npm run apikey -- <command> [--init]',
    ]);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it('runs through the npm script, and names the database it opened', async () => {
    const path = join(dir.path, 'npm.sqlite');
    const { stdout, stderr } = await run('npm', ['run', '--silent', 'apikey', '--', 'list', '--init'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', DATABASE_PATH: path },
    });
    expect(stdout.trim()).toBe('No API keys are stored.');
    expect(stderr.trim()).toBe(`apikey: database ${path} (SQLite, WAL, synchronous=FULL)`);
  }, 120000);

  it('refuses to create a SQLite database that does not exist yet, unless --init is given', async () => {
    const path = join(dir.path, 'elsewhere', 'petstore.sqlite');

    const refused = await apikey({ DATABASE_PATH: path }, 'create', '--name', 'lost');

    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr.trim()).toBe(
      `apikey: no database at ${path}: run from the service's folder, or set DATABASE_PATH (or DATABASE_URL) as the service has it; add --init to create a new database there`,
    );
    expect(existsSync(path)).toBe(false);

    const created = await apikey({ DATABASE_PATH: path }, 'create', '--name', 'found', '--init');
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(KEY_PATTERN);
    expect(existsSync(path)).toBe(true);
  });
});

describe('Keys at start-up (real process)', () => {
  let dir: ReturnType<typeof tempDir>;

  beforeEach(() => (dir = tempDir()));
  afterEach(() => dir.cleanup());

  it('the first-run key is a stored key named "bootstrap", made once', async () => {
    const database = testDatabaseEnv(join(dir.path, 'petstore.sqlite'));
    await stopService(await spawnService(database));
    await stopService(await spawnService(database));
    const listed = JSON.parse((await apikey(database, 'list', '--json')).stdout) as Array<{
      name: string;
    }>;
    expect(listed.map((entry) => entry.name)).toEqual(['bootstrap']);
  });

  it('in production, with no API_KEYS and no stored key, refuses to start', async () => {
    const { code, output } = await exitOf(
      launchService({ ...testDatabaseEnv(join(dir.path, 'prod.sqlite')), NODE_ENV: 'production' }),
    );
    expect(code).toBe(1);
    expect(output.trim().split('\n')).toHaveLength(1);
    expect(output).toMatch(
      /^petstore: could not start: no API key can manage keys: set API_KEYS or create one/,
    );
  });

  it('in production, a stored key is enough to start', async () => {
    const database = testDatabaseEnv(join(dir.path, 'prod.sqlite'));
    const created = await apikeyProcess(database, 'create', '--name', 'prod', '--init');
    expect(created.code).toBe(0);
    const key = KEY_PATTERN.exec(created.stdout)![0];
    const service = await spawnService({ ...database, NODE_ENV: 'production' });
    const res = await fetch(`${service.url}/v1/pets`, { headers: { Authorization: `Bearer ${key}` } });
    await stopService(service);
    expect(res.status).toBe(200);
    expect(service.output()).not.toMatch(KEY_PATTERN);
  });
});
