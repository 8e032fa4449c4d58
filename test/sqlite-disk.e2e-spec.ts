import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { NestExpressApplication } from '@nestjs/platform-express';
import Database from 'better-sqlite3';
import request from 'supertest';
import type { App } from 'supertest/types';
import { AUTH, startApp, tempDir, TEST_DATABASE_URL } from './support/app';
import { captureLogs, CapturedLogs } from './support/logs';

/**
 * SQLite on a disk that fills up, and on a file that cannot be written: the service answers
 * 503 (never 500), logs why once, damages nothing it acknowledged, and works again as soon as
 * the disk has room or the file can be written. Needs root (a size-limited tmpfs; chattr);
 * where the machine cannot provide them the tests are skipped with a message.
 */
const UNAVAILABLE = {
  code: 'service_unavailable',
  message: 'The service is temporarily unavailable.',
  status: 503,
};

/** Runs a command; whether it worked. */
function tryRun(command: string, args: string[]): boolean {
  try {
    execFileSync(command, args, { stdio: 'pipe' });
    return true;
  } catch {
    return false;
  }
}

function query(path: string, sql: string): Promise<Record<string, unknown>[]> {
  const db = new Database(path, { readonly: true });
  try {
    return Promise.resolve(db.prepare(sql).all() as Record<string, unknown>[]);
  } finally {
    db.close();
  }
}

interface Pet {
  id: number;
  name: string;
  categoryId: number;
}

/** The database is whole, and every acknowledged animal is in it, unchanged. */
async function expectIntact(path: string, acknowledged: Pet[]): Promise<void> {
  expect(await query(path, 'PRAGMA integrity_check')).toEqual([{ integrity_check: 'ok' }]);
  const rows = await query(path, 'SELECT id, name, category_id AS categoryId FROM pets');
  const stored = new Map(rows.map((row) => [Number(row.id), row]));
  for (const pet of acknowledged) {
    expect(stored.get(pet.id)).toEqual({ id: pet.id, name: pet.name, categoryId: pet.categoryId });
  }
}

const sqliteOnly = TEST_DATABASE_URL ? describe.skip : describe;

sqliteOnly('SQLite disk trouble (e2e)', () => {
  let app: NestExpressApplication | undefined;
  let http: App;
  let logs: CapturedLogs;
  const acknowledged: Pet[] = [];
  let serial = 0;

  const boot = async (path: string) => {
    logs = captureLogs();
    app = await startApp({ DATABASE_PATH: path, LOG_LEVEL: 'warn' }, { logDestination: logs.stream });
    http = app.getHttpServer();
  };
  const create = async () => {
    const name = `disk-${++serial}`;
    const res = await request(http).post('/v1/pets').set(AUTH).send({ name, categoryId: serial });
    if (res.status === 201) acknowledged.push(res.body as Pet);
    return res;
  };
  const outageWarnings = () =>
    logs.lines().filter((line) => String(line.msg).startsWith('database unavailable, answering 503'));

  afterEach(async () => {
    await app?.close();
    app = undefined;
    acknowledged.length = 0;
  });

  it('a full disk: 503 with Retry-After, one warning, nothing damaged, and creates work again once there is room', async () => {
    const dir = tempDir();
    const mountPoint = join(dir.path, 'small-disk');
    mkdirSync(mountPoint);
    if (process.getuid?.() !== 0 || !tryRun('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', mountPoint])) {
      console.warn('skipped: mounting a size-limited tmpfs needs root and a machine that allows mounts');
      dir.cleanup();
      return;
    }
    const database = join(mountPoint, 'petstore.sqlite');
    const filler = join(mountPoint, 'filler');
    try {
      await boot(database);
      for (let i = 0; i < 20; i++) expect((await create()).status).toBe(201);

      // Fill the disk to the last byte, a known room of it in a file of its own, freed later.
      const room = join(mountPoint, 'room');
      writeFileSync(room, Buffer.alloc(256 * 1024));
      const fd = openSync(filler, 'w');
      try {
        for (const size of [4096, 1]) {
          try {
            for (;;) writeSync(fd, Buffer.alloc(size, 1));
          } catch (error) {
            expect((error as NodeJS.ErrnoException).code).toBe('ENOSPC');
          }
        }
      } finally {
        closeSync(fd);
      }

      // The write-ahead log may still hold a few free pages: creates fail as soon as it is full.
      let failed = await create();
      for (let i = 0; i < 200 && failed.status === 201; i++) failed = await create();
      expect(failed.status).toBe(503);
      expect(failed.body).toEqual(UNAVAILABLE);
      expect(failed.headers['retry-after']).toBe('2');
      for (let i = 0; i < 3; i++) {
        const res = await create();
        expect({ status: res.status, body: res.body as unknown }).toEqual({ status: 503, body: UNAVAILABLE });
      }
      expect((await request(http).get('/v1/pets?limit=100').set(AUTH)).status).toBe(200);
      expect(outageWarnings()).toHaveLength(1);
      expect(outageWarnings()[0].msg).toMatch(/SQLITE_FULL/);
      expect(logs.text()).not.toMatch(/internal_error|Unexpected error|"level":"error"/);

      // Room again: the next create succeeds, without a restart.
      rmSync(filler);
      rmSync(room);
      expect((await create()).status).toBe(201);
      expect((await create()).status).toBe(201);
      await app!.close();
      app = undefined;
      await expectIntact(database, acknowledged);
    } finally {
      await app?.close();
      app = undefined;
      tryRun('umount', [mountPoint]);
      dir.cleanup();
    }
  });

  it('a file that cannot be written: 503, nothing damaged, and creates work again once it can', async () => {
    const dir = tempDir();
    const database = join(dir.path, 'petstore.sqlite');
    const probe = join(dir.path, 'probe');
    closeSync(openSync(probe, 'w'));
    if (process.getuid?.() !== 0 || !tryRun('chattr', ['+i', probe])) {
      console.warn(
        'skipped: making a file unwritable for root needs chattr +i on a file system that supports it',
      );
      dir.cleanup();
      return;
    }
    tryRun('chattr', ['-i', probe]);
    // The database and its write-ahead log become immutable: every write to them fails, even as
    // root (a chmod does not stop root, nor a file already open). The shared-memory index
    // stays writable: SQLite maps it into memory, and a mapping that cannot be written is a crash.
    const files = [database, `${database}-wal`];
    try {
      await boot(database);
      for (let i = 0; i < 10; i++) expect((await create()).status).toBe(201);
      expect(tryRun('chattr', ['+i', ...files])).toBe(true);

      const refused = await create();
      expect(refused.status).toBe(503);
      expect(refused.body).toEqual(UNAVAILABLE);
      expect(refused.headers['retry-after']).toBe('2');
      expect((await create()).status).toBe(503);
      expect(outageWarnings()).toHaveLength(1);
      expect(outageWarnings()[0].msg).toMatch(/SQLITE_(IOERR|READONLY)/);
      expect(logs.text()).not.toMatch(/internal_error|Unexpected error|"level":"error"/);

      tryRun('chattr', ['-i', ...files]);
      expect((await create()).status).toBe(201);
      await app!.close();
      app = undefined;
      await expectIntact(database, acknowledged);
    } finally {
      await app?.close();
      app = undefined;
      tryRun('chattr', ['-i', ...files]);
      dir.cleanup();
    }
  });

  it('a write lock held past the busy timeout: 503, and creates work again once it is released', async () => {
    const dir = tempDir();
    const database = join(dir.path, 'petstore.sqlite');
    logs = captureLogs();
    app = await startApp(
      { DATABASE_PATH: database, LOG_LEVEL: 'warn', SQLITE_BUSY_TIMEOUT_MS: '200' },
      { logDestination: logs.stream },
    );
    http = app.getHttpServer();
    const other = new Database(database);
    const run = (sql: string) => other.exec(sql);
    try {
      expect((await create()).status).toBe(201);
      run('BEGIN IMMEDIATE'); // another connection holds the write lock

      const refused = await create();
      expect({ status: refused.status, body: refused.body as unknown }).toEqual({
        status: 503,
        body: UNAVAILABLE,
      });
      expect(refused.headers['retry-after']).toBe('2');
      expect(outageWarnings()[0].msg).toMatch(/SQLITE_BUSY/);

      run('COMMIT');
      expect((await create()).status).toBe(201);
    } finally {
      other.close();
      await app.close();
      app = undefined;
      dir.cleanup();
    }
  });
});
