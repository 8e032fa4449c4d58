import { once } from 'node:events';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import type { App } from 'supertest/types';
import Database from 'better-sqlite3';
import { AUTH, startApp, tempDir, TEST_KEY } from './support/app';
import { exitOf, launchService, spawnService, stopService } from './support/process';

const STATUSES = [undefined, 'available', 'sold'];

/** Rows read straight from a SQLite file with its own connection (the service is not running). */
function sqliteRows(path: string, sql: string): Promise<Array<Record<string, unknown>>> {
  const db = new Database(path);
  try {
    return Promise.resolve(db.prepare(sql).all() as Array<Record<string, unknown>>);
  } finally {
    db.close();
  }
}

describe('Persistence on a real SQLite file (e2e)', () => {
  let dir: ReturnType<typeof tempDir>;
  let databasePath: string;

  beforeEach(() => {
    dir = tempDir();
    databasePath = join(dir.path, 'nested', 'petstore.sqlite');
  });

  afterEach(() => dir.cleanup());

  it('creates the database and its folder on first start, in WAL mode, and keeps data across a restart', async () => {
    const first = await startApp({ DATABASE_PATH: databasePath });
    const created = await request(first.getHttpServer() as App)
      .post('/v1/pets')
      .set(AUTH)
      .send({ name: 'Survivor', categoryId: 4, status: 'sold' });
    expect(created.status).toBe(201);
    await first.close();
    expect(statSync(databasePath).isFile()).toBe(true);

    const second = await startApp({ DATABASE_PATH: databasePath });
    const server = second.getHttpServer() as App;
    const read = await request(server).get(`/v1/pets/${created.body.id}`).set(AUTH);
    expect(read.body).toEqual(created.body);
    const next = await request(server).post('/v1/pets').set(AUTH).send({ name: 'Second', categoryId: 4 });
    expect(next.body.id).toBe(created.body.id + 1);
    await second.close();

    const header = readFileSync(databasePath).subarray(18, 20);
    expect([...header]).toEqual([2, 2]); // file format bytes 18-19 = 2: WAL mode
  });

  it('200 concurrent creates on a file all succeed with unique ids', async () => {
    const app = await startApp({ DATABASE_PATH: databasePath });
    const server = app.getHttpServer() as App;
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        request(server)
          .post('/v1/pets')
          .set(AUTH)
          .send({ name: `Writer ${i}`, categoryId: 1 }),
      ),
    );
    const list = await request(server).get('/v1/pets?limit=100').set(AUTH);
    await app.close();
    expect(results.map((res) => res.status)).toEqual(Array(200).fill(201));
    expect(new Set(results.map((res) => res.body.id)).size).toBe(200);
    expect(list.body).toHaveLength(100);
  });

  it.each(['FULL', 'NORMAL'])(
    'synchronous=%s: SIGKILL mid-stream loses no acknowledged animal; a restart finds each one identical',
    async (synchronous) => {
      const env = { DATABASE_PATH: databasePath, API_KEYS: TEST_KEY, SQLITE_SYNCHRONOUS: synchronous };
      const service = await spawnService(env);
      const sent = new Map<string, Record<string, unknown>>();
      const acknowledged: Array<Record<string, unknown>> = [];
      let killed = false;
      const writer = async (w: number) => {
        for (let i = 0; !killed; i++) {
          const pet = {
            name: `Crash ${w}-${i}`,
            categoryId: w + 1,
            ...(i % 3 ? { status: STATUSES[i % 3] } : {}),
          };
          sent.set(pet.name, pet);
          try {
            const res = await fetch(`${service.url}/v1/pets`, {
              method: 'POST',
              headers: { ...AUTH, 'Content-Type': 'application/json' },
              body: JSON.stringify(pet),
            });
            const body = (await res.json()) as Record<string, unknown>;
            if (res.status === 201) acknowledged.push(body);
            else throw new Error(`create answered ${res.status}: ${JSON.stringify(body)}`);
          } catch (error) {
            if (killed) return; // the connection died with the process
            throw error;
          }
        }
      };
      const writers = Array.from({ length: 8 }, (_, w) => writer(w));
      // Kill at an unpredictable moment once a good number of writes has been acknowledged.
      while (acknowledged.length < 150) await new Promise((resolve) => setTimeout(resolve, 10));
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 100));
      const exited = once(service.child, 'exit');
      killed = true;
      service.child.kill('SIGKILL');
      await Promise.all(writers);
      expect(await exited).toEqual([null, 'SIGKILL']);

      const restarted = await spawnService(env);
      try {
        for (const pet of acknowledged) {
          const res = await fetch(`${restarted.url}/v1/pets/${pet.id as number}`, { headers: AUTH });
          expect({ status: res.status, body: await res.json() }).toEqual({ status: 200, body: pet });
        }
        const page = (await (
          await fetch(`${restarted.url}/v1/pets?limit=100`, { headers: AUTH })
        ).json()) as Array<{
          id: number;
        }>;
        expect(page.map((pet) => pet.id)).toEqual(Array.from({ length: 100 }, (_, index) => index + 1));
        const next = await fetch(`${restarted.url}/v1/pets`, {
          method: 'POST',
          headers: { ...AUTH, 'Content-Type': 'application/json' },
          body: JSON.stringify({ name: 'After the crash', categoryId: 1 }),
        });
        expect(next.status).toBe(201);
        const maxAcknowledged = Math.max(...acknowledged.map((pet) => pet.id as number));
        expect(((await next.json()) as { id: number }).id).toBeGreaterThan(maxAcknowledged);
      } finally {
        await stopService(restarted);
      }

      // The file itself: intact, and every row is an animal that was sent, exactly as sent
      // (a create in flight at the kill may have committed without being acknowledged).
      const rows = await sqliteRows(
        databasePath,
        'SELECT id, name, category_id, status FROM pets ORDER BY id',
      );
      expect(await sqliteRows(databasePath, 'PRAGMA integrity_check')).toEqual([{ integrity_check: 'ok' }]);
      const byId = new Map(rows.map((row) => [row.id, row]));
      for (const pet of acknowledged) expect(byId.has(pet.id)).toBe(true);
      for (const row of rows.filter((row) => row.name !== 'After the crash')) {
        const request = sent.get(row.name as string);
        expect(request).toBeDefined();
        expect({ name: row.name, categoryId: row.category_id, status: row.status ?? undefined }).toEqual({
          status: undefined,
          ...request,
        });
      }
    },
    60_000,
  );
});

describe('Idempotent creates through a crash (e2e, real process)', () => {
  let dir: ReturnType<typeof tempDir>;

  beforeEach(() => {
    dir = tempDir();
  });

  afterEach(() => {
    dir.cleanup();
  });

  it('SIGKILL with keyed creates in flight: after a restart every key is stored exactly once, each retry done within 5 s', async () => {
    const databasePath = join(dir.path, 'petstore.sqlite');
    const env = { DATABASE_PATH: databasePath, API_KEYS: TEST_KEY };
    const service = await spawnService(env);
    const create = (url: string, name: string) =>
      fetch(`${url}/v1/pets`, {
        method: 'POST',
        headers: { ...AUTH, 'Content-Type': 'application/json', 'Idempotency-Key': name.replace(/ /g, '-') },
        body: JSON.stringify({ name, categoryId: 5 }),
      });
    const sent: string[] = [];
    let acknowledged = 0;
    let killed = false;
    const writer = async (w: number) => {
      for (let i = 0; !killed; i++) {
        const name = `Keyed ${w}-${i}`;
        sent.push(name);
        try {
          const res = await create(service.url, name);
          if (res.status !== 201) throw new Error(`create answered ${res.status}`);
          acknowledged++;
        } catch (error) {
          if (killed) return;
          throw error;
        }
      }
    };
    const writers = Array.from({ length: 8 }, (_, w) => writer(w));
    const failed = Promise.all(writers);
    while (acknowledged < 100)
      await Promise.race([failed, new Promise((resolve) => setTimeout(resolve, 10))]);
    const exited = once(service.child, 'exit');
    killed = true;
    service.child.kill('SIGKILL');
    await Promise.all(writers);
    await exited;

    const restarted = await spawnService(env);
    const back = Date.now();
    try {
      // Every key again, as a client retries (after Retry-After on a 409).
      const retried = await Promise.all(
        sent.map(async (name) => {
          for (;;) {
            const res = await create(restarted.url, name);
            if (res.status !== 409) return { name, status: res.status, at: Date.now() - back };
            expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
            await new Promise((resolve) =>
              setTimeout(resolve, Number(res.headers.get('retry-after')) * 1000),
            );
          }
        }),
      );
      expect(retried.filter((result) => result.status !== 201)).toEqual([]);
      expect(Math.max(...retried.map((result) => result.at))).toBeLessThan(5000);
    } finally {
      await stopService(restarted);
    }
    const rows = await sqliteRows(databasePath, 'SELECT name, count(*) AS n FROM pets GROUP BY name');
    expect(rows.filter((row) => row.n !== 1)).toEqual([]);
    expect(rows.map((row) => row.name).sort()).toEqual([...sent].sort());
  }, 60_000);
});

describe('First run without API_KEYS (e2e, real process)', () => {
  let dir: ReturnType<typeof tempDir>;

  beforeEach(() => (dir = tempDir()));
  afterEach(() => dir.cleanup());

  it('stores a bootstrap key, prints it once, accepts it after a restart, and never starts open', async () => {
    // No drain on stop: the client's idle keep-alive connections would hold each stop 5 s.
    const env = { DATABASE_PATH: join(dir.path, 'data', 'petstore.sqlite'), SHUTDOWN_DRAIN_MS: '0' };
    const first = await spawnService(env);
    const key = /^\s+(pet_[A-Za-z0-9_-]{43})$/m.exec(first.output())?.[1];
    expect(key).toBeDefined();
    expect((await fetch(`${first.url}/v1/pets`)).status).toBe(401);
    const authorized = await fetch(`${first.url}/v1/pets`, { headers: { Authorization: `Bearer ${key}` } });
    expect(authorized.status).toBe(200);
    await stopService(first);
    for (const file of readdirSync(join(dir.path, 'data'))) {
      expect(readFileSync(join(dir.path, 'data', file)).includes(Buffer.from(key!))).toBe(false);
    }

    const second = await spawnService(env);
    expect(second.output()).not.toContain(key);
    expect(second.output()).not.toMatch(/pet_[A-Za-z0-9_-]{43}/);
    const again = await fetch(`${second.url}/v1/pets`, { headers: { Authorization: `Bearer ${key}` } });
    expect(again.status).toBe(200);
    await stopService(second);
  });

  it('API_KEYS, when set, are accepted and no bootstrap key is made', async () => {
    const service = await spawnService({
      DATABASE_PATH: join(dir.path, 'db.sqlite'),
      API_KEYS: 'first-key-0123456789, second-key-0123456789',
      SHUTDOWN_DRAIN_MS: '0',
    });
    const status = async (key: string) =>
      (await fetch(`${service.url}/v1/pets`, { headers: { Authorization: `Bearer ${key}` } })).status;
    expect(await status('first-key-0123456789')).toBe(200);
    expect(await status('second-key-0123456789')).toBe(200);
    expect(await status('third-key-0123456789')).toBe(401);
    expect(service.output()).not.toContain('first-key-0123456789');
    expect(service.output()).not.toMatch(/pet_[A-Za-z0-9_-]{43}/);
    await stopService(service);
  });
});

describe('Start-up configuration errors (real process)', () => {
  it.each([
    [
      { PORT: 'eighty' },
      /^petstore: configuration error: PORT must be an integer from 0 to 65535 \(got "eighty"\)$/,
    ],
    [
      { SQLITE_SYNCHRONOUS: 'OFF' },
      /^petstore: configuration error: SQLITE_SYNCHRONOUS must be one of FULL, NORMAL/,
    ],
    [{ API_KEYS: 'short' }, /^petstore: configuration error: API_KEYS entry 1 is not a valid key/],
  ])('%o stops start-up with one clear line and exit code 1', async (env, message) => {
    const { code, output } = await exitOf(launchService({ DATABASE_PATH: ':memory:', ...env }));
    expect(code).toBe(1);
    expect(output.trim().split('\n')).toHaveLength(1);
    expect(output.trim()).toMatch(message);
    expect(output).not.toContain('short');
  });

  it('a database that cannot be opened stops start-up with one line, no stack trace', async () => {
    const { code, output } = await exitOf(
      launchService({ DATABASE_PATH: '/dev/null/petstore.sqlite', API_KEYS: 'a-valid-key-0123456789' }),
    );
    expect(code).toBe(1);
    expect(output.trim().split('\n')).toHaveLength(1);
    expect(output).toMatch(/^petstore: could not start: /);
    expect(output).not.toMatch(/\n\s+at /);
  });
});
