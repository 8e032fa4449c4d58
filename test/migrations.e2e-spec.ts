import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { getRepositoryToken } from '@nestjs/typeorm';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { loadConfig } from '../src/config/app-config';
import { schemaDrift } from '../src/cli/migration-check';
import { entitiesOf, migrationsOf } from '../src/database/module-schema';
import { SCHEMAS } from '../src/features';
import { IDEMPOTENCY_SCHEMA } from '../src/idempotency/idempotency.schema';
import { TEST_DATABASE_URL, tempDir, useApp } from './support/app';
import { entitiesWithUnmigratedColumn } from './support/unmigrated-column';

const ROOT = join(__dirname, '..');
const ALL_ENTITIES = entitiesOf(SCHEMAS);
const ALL_MIGRATIONS = migrationsOf(SCHEMAS);
const run = promisify(execFile);

/** SQLite, or this run's database on the server of TEST_DATABASE_URL: the check makes its own scratch schema. */
const database = TEST_DATABASE_URL ? 'PostgreSQL' : 'SQLite';
const config = loadConfig(
  TEST_DATABASE_URL ? { DATABASE_URL: TEST_DATABASE_URL } : { DATABASE_PATH: ':memory:' },
).database;

interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * `npm run migration:check` as a command, from a folder without `.env`, on the database this
 * suite runs on; `preload` is a module loaded before it.
 */
async function migrationCheck(cwd: string, preload?: string): Promise<CommandResult> {
  const env = {
    PATH: process.env.PATH,
    TS_NODE_PROJECT: join(ROOT, 'tsconfig.json'),
    ...(TEST_DATABASE_URL ? { DATABASE_URL: TEST_DATABASE_URL } : {}),
  };
  const preloads = preload ? ['-r', join(ROOT, preload)] : [];
  const args = [
    '-r',
    require.resolve('ts-node/register/transpile-only'),
    ...preloads,
    join(ROOT, 'src/cli/migration-check.ts'),
  ];
  try {
    const { stdout, stderr } = await run(process.execPath, args, { cwd, env, timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

/** Schemas the in-process checks of this test file left on the PostgreSQL server. */
async function leftoverScratchSchemas(): Promise<string[]> {
  if (!TEST_DATABASE_URL) return [];
  const client = new Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ nspname: string }>(
      'SELECT nspname FROM pg_namespace WHERE starts_with(nspname, $1)',
      [`migration_check_${process.pid}_`],
    );
    return rows.map((row) => row.nspname);
  } finally {
    await client.end();
  }
}

describe(`Migrations and entities (${database})`, () => {
  it('agree: the migrations create exactly what the entities declare', async () => {
    await expect(schemaDrift(config)).resolves.toEqual([]);
  });

  it('disagree when an entity has a column no migration creates', async () => {
    const drift = await schemaDrift(config, { entities: entitiesWithUnmigratedColumn() });

    expect(drift.length).toBeGreaterThan(0);
    expect(drift.some((query) => query.includes('"nickname"'))).toBe(true);
  });

  it('disagree when a module’s migration is left out', async () => {
    const migrations = ALL_MIGRATIONS.filter(
      (migration) => !IDEMPOTENCY_SCHEMA.migrations.includes(migration),
    );

    const drift = await schemaDrift(config, { migrations });

    expect(drift.some((query) => query.startsWith('CREATE TABLE "idempotency_keys"'))).toBe(true);
  });

  it('leave no scratch schema behind', async () => {
    await expect(leftoverScratchSchemas()).resolves.toEqual([]);
  });

  describe('npm run migration:check', () => {
    const folder = tempDir();
    afterAll(() => folder.cleanup());

    it('is the command these tests run', () => {
      const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
        scripts: Record<string, string>;
      };
      expect(scripts['migration:check']).toBe(
        'node -r ts-node/register/transpile-only src/cli/migration-check.ts',
      );
    });

    it('exits 0 and says so when they agree', async () => {
      const result = await migrationCheck(folder.path);

      expect(result).toEqual({
        code: 0,
        stdout: `migration:check: the migrations create exactly what the entities declare (${database})\n`,
        stderr: '',
      });
    });

    it('exits 1 and lists the SQL still needed when an entity has a column without a migration', async () => {
      const result = await migrationCheck(folder.path, 'test/support/unmigrated-column.preload.ts');

      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      const lines = result.stderr.trimEnd().split('\n');
      expect(lines[0]).toBe(
        `migration:check: the entities differ from what the migrations create (${database}); ` +
          'for the tables to match them, TypeORM would still run:',
      );
      expect(lines.slice(1, -1).every((line) => /^ {2}\S.*;$/.test(line))).toBe(true);
      expect(lines.some((line) => line.includes('"nickname"'))).toBe(true);
      expect(lines.at(-1)).toMatch(/^Add a migration to the module/);
    });
  });
});

describe(`The app's entities and migrations (${database})`, () => {
  const api = useApp();
  let dataSource: DataSource;

  beforeAll(() => {
    dataSource = api.app.get(DataSource);
  });

  it('are those the modules contribute: every entity the app loads from its modules is in the composed list, and back', () => {
    const loaded = dataSource.entityMetadatas.map((entity) => entity.target);

    expect(new Set(loaded)).toEqual(new Set(ALL_ENTITIES));
    expect(loaded).toHaveLength(ALL_ENTITIES.length);
  });

  it('give every entity a repository from a module of the app', () => {
    for (const entity of ALL_ENTITIES) {
      expect(api.app.get(getRepositoryToken(entity))).toBe(dataSource.getRepository(entity));
    }
  });

  it('run every composed migration, and only those', async () => {
    expect(dataSource.migrations.map((migration) => migration.name)).toEqual(
      ALL_MIGRATIONS.map((migration) => migration.name),
    );
    await expect(dataSource.showMigrations()).resolves.toBe(false);
  });
});
