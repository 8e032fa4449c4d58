import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { NestExpressApplication } from '@nestjs/platform-express';
import { AUTH, startApp, TEST_DATABASE_URL, TEST_KEY, tempDir, testDatabaseEnv } from './support/app';
import { portOf } from './support/raw-http';
import { RunningService, spawnService, stopService } from './support/process';
import { SOAK } from './support/soak';

interface Pet {
  id: number;
  name: string;
  categoryId: number;
  status?: string;
}

const STATUSES = ['available', 'pending', 'sold', undefined];

/**
 * Another process (plain better-sqlite3) takes SQLite's write lock on the file (BEGIN IMMEDIATE),
 * holds it for `ms`, then commits. `locked` resolves once it holds the lock; `released` once it
 * has exited, with its exit code and the moment (Date.now(): this process's clock too) it began
 * to commit, before which no other writer can finish.
 */
function holdWriteLock(
  path: string,
  ms: number,
): { locked: Promise<void>; released: Promise<{ code: number | null; at: number }> } {
  const script = `
    const Database = require('better-sqlite3');
    const db = new Database(process.argv[1]);
    db.exec('BEGIN IMMEDIATE');
    console.log('locked');
    setTimeout(() => {
      console.log('committing at ' + Date.now());
      db.exec('COMMIT');
      db.close();
    }, ${ms});`;
  const child = spawn(process.execPath, ['-e', script, path], {
    cwd: join(__dirname, '..'),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  const locked = new Promise<void>((resolve) =>
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('locked')) resolve();
    }),
  );
  const released = once(child, 'exit').then(([code]) => ({
    code: code as number | null,
    at: Number(/committing at (\d+)/.exec(output)?.[1]),
  }));
  return { locked, released };
}
const WAVES = 5 * SOAK;
const WAVE_SIZE = 100;

/**
 * Two instances of the service on one database (on SQLite: one file, two processes, so that
 * their writes really contend for SQLite's lock), creates in waves and reads all the while.
 */
describe('Concurrency: two processes on one database (e2e)', () => {
  let dir: ReturnType<typeof tempDir>;
  let databasePath: string;
  let app: NestExpressApplication;
  let other: RunningService;
  let urls: string[];

  beforeAll(async () => {
    dir = tempDir();
    databasePath = join(dir.path, 'petstore.sqlite');
    const database = testDatabaseEnv(databasePath);
    // The in-process instance migrates the new database first; then the second process starts on it.
    app = await startApp(database);
    await app.listen(0, '127.0.0.1');
    other = await spawnService({ ...database, API_KEYS: TEST_KEY });
    urls = [`http://127.0.0.1:${portOf(app)}`, other.url];
  }, 60_000);

  afterAll(async () => {
    if (other) await stopService(other);
    await app?.close();
    dir.cleanup();
  });

  const create = async (url: string, pet: Omit<Pet, 'id'>) => {
    const res = await fetch(`${url}/v1/pets`, {
      method: 'POST',
      headers: { ...AUTH, 'Content-Type': 'application/json' },
      body: JSON.stringify(pet),
    });
    return { status: res.status, body: await res.text() };
  };

  const read = async (url: string, path: string) => {
    const res = await fetch(`${url}${path}`, { headers: AUTH });
    return { status: res.status, body: await res.text() };
  };

  it(
    `${WAVES * WAVE_SIZE} creates in waves of ${WAVE_SIZE} over both instances: all 201, unique ids, all read back; reads never fail`,
    async () => {
      const acknowledged: Pet[] = [];
      const failures: string[] = [];
      let reads = 0;
      let writing = true;

      const reader = async (url: string) => {
        while (writing) {
          const page = await read(url, '/v1/pets?limit=100');
          if (page.status !== 200 || !Array.isArray(JSON.parse(page.body)))
            failures.push(`list: ${page.status} ${page.body}`);
          if (acknowledged.length > 0) {
            const pet = acknowledged[Math.floor(Math.random() * acknowledged.length)];
            const one = await read(url, `/v1/pets/${pet.id}`);
            if (one.status !== 200 || one.body !== JSON.stringify(pet))
              failures.push(`get ${pet.id}: ${one.status} ${one.body}`);
          }
          reads += 1;
        }
      };
      const readers = [...urls, ...urls].map(reader);

      const answers: Array<{ status: number; body: string }> = [];
      for (let wave = 0; wave < WAVES; wave += 1) {
        const results = await Promise.all(
          Array.from({ length: WAVE_SIZE }, (_, index) => {
            const status = STATUSES[index % STATUSES.length];
            const pet = {
              name: `Wave ${wave} #${index}`,
              categoryId: wave + 1,
              ...(status ? { status } : {}),
            };
            return create(urls[index % 2], pet);
          }),
        );
        answers.push(...results);
        for (const result of results)
          if (result.status === 201) acknowledged.push(JSON.parse(result.body) as Pet);
      }
      writing = false;
      await Promise.all(readers);

      expect(answers.filter((answer) => answer.status !== 201)).toEqual([]);
      expect(answers.some((answer) => /SQLITE|busy|locked/i.test(answer.body))).toBe(false);
      expect(failures).toEqual([]);
      expect(reads).toBeGreaterThan(10);

      const ids = acknowledged.map((pet) => pet.id);
      expect(new Set(ids).size).toBe(WAVES * WAVE_SIZE);
      // Every acknowledged animal reads back identical from either instance.
      for (const [index, pet] of acknowledged.entries()) {
        const back = await read(urls[index % 2], `/v1/pets/${pet.id}`);
        expect(back).toEqual({ status: 200, body: JSON.stringify(pet) });
      }
      expect(other.output()).not.toMatch(/SQLITE_BUSY|Unexpected error/);
    },
    60_000 * SOAK,
  );

  // SQLite only: another process holds the write lock for a second, as the apikey CLI or a
  // second instance may. Writers wait for it (busy timeout) instead of failing; reads still work.
  (TEST_DATABASE_URL ? it.skip : it)(
    'creates wait while another process holds the write lock, and all succeed; reads too',
    async () => {
      const locker = holdWriteLock(databasePath, 1000);
      await locker.locked;
      const timed = (promise: Promise<{ status: number; body: string }>) =>
        promise.then((result) => ({ ...result, at: Date.now() }));
      const creates = Array.from({ length: 50 }, (_, index) =>
        timed(create(urls[index % 2], { name: `Waiting ${index}`, categoryId: 9 })),
      );
      const reads = Array.from({ length: 20 }, (_, index) =>
        timed(read(urls[index % 2], '/v1/pets?limit=5')),
      );
      const sent = Date.now();
      const [created, listed] = await Promise.all([Promise.all(creates), Promise.all(reads)]);
      const released = await locker.released;
      expect(released.code).toBe(0);

      expect(created.map((result) => result.status)).toEqual(Array(50).fill(201));
      expect(listed.map((result) => result.status)).toEqual(Array(20).fill(200));
      // The creates were held up by the lock: sent while it was held, none was answered before
      // its holder began to commit.
      expect(sent).toBeLessThan(released.at);
      expect(Math.min(...created.map((result) => result.at))).toBeGreaterThanOrEqual(released.at);
      expect(new Set(created.map((result) => (JSON.parse(result.body) as Pet).id)).size).toBe(50);
    },
    30_000,
  );

  it('a change made through one process is answered by the other within a second, not from its cache', async () => {
    if (TEST_DATABASE_URL) return; // test/postgres.e2e-spec.ts holds instances on PostgreSQL to it
    const created = await create(urls[0], { name: 'Shared', categoryId: 1, status: 'available' });
    const { id } = JSON.parse(created.body) as Pet;
    let version = 1;
    for (let change = 1; change <= 5; change++) {
      // The other process reads it first, so that its next answer would come from its cache.
      await read(urls[1], `/v1/pets/${id}`);
      const res = await fetch(`${urls[change % 2]}/v1/pets/${id}`, {
        method: 'PATCH',
        headers: { ...AUTH, 'Content-Type': 'application/merge-patch+json', 'If-Match': `"${version}"` },
        body: JSON.stringify({ name: `Shared ${change}` }),
      });
      expect(res.status).toBe(200);
      version++;
      const changedAt = Date.now();
      const elsewhere = urls[(change + 1) % 2];
      while (JSON.parse((await read(elsewhere, `/v1/pets/${id}`)).body).name !== `Shared ${change}`) {
        expect(Date.now() - changedAt).toBeLessThan(1000);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }
  });
});
