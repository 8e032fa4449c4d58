import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { MigrationInterface } from 'typeorm';
import { entitiesOf, migrationsOf, ModuleSchema } from './database/module-schema';
import { SCHEMAS as MODULE_SCHEMAS } from './features';

const SRC = __dirname;
const ALL_ENTITIES = entitiesOf(MODULE_SCHEMAS);
const ALL_MIGRATIONS = migrationsOf(MODULE_SCHEMAS);

/** `src/<module>/<module>.schema.ts` files and `src/<module>/migrations/*.ts` files, by module. */
function moduleFolders(): { module: string; schemaFiles: string[]; migrationFiles: string[] }[] {
  return readdirSync(SRC, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map(({ name: module }) => {
      const files = readdirSync(join(SRC, module));
      const migrationFiles = files.includes('migrations')
        ? readdirSync(join(SRC, module, 'migrations')).filter(
            (file) => file.endsWith('.ts') && !file.endsWith('.spec.ts'),
          )
        : [];
      return { module, schemaFiles: files.filter((file) => file.endsWith('.schema.ts')), migrationFiles };
    });
}

/** A module schema by its shape: other `*.schema.ts` files (e.g. of configuration) may exist. */
const isModuleSchema = (value: unknown): value is ModuleSchema =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as ModuleSchema).module === 'string' &&
  Array.isArray((value as ModuleSchema).entities) &&
  Array.isArray((value as ModuleSchema).migrations);

const isMigrationClass = (value: unknown): value is new () => MigrationInterface =>
  typeof value === 'function' && typeof (value.prototype as { up?: unknown }).up === 'function';

describe('the composed schema', () => {
  it('lists every module schema file, so that no module’s migrations are left out', async () => {
    const found: ModuleSchema[] = [];
    for (const { module, schemaFiles } of moduleFolders()) {
      for (const file of schemaFiles) {
        const exports = (await import(join(SRC, module, file))) as Record<string, unknown>;
        found.push(...Object.values(exports).filter(isModuleSchema));
      }
    }

    expect(found.length).toBeGreaterThan(0);
    expect(new Set(found)).toEqual(new Set(MODULE_SCHEMAS));
  });

  it('runs every migration file: each class in src/<module>/migrations/ is listed by that module', async () => {
    const folders = moduleFolders().filter((folder) => folder.migrationFiles.length > 0);
    expect(folders.length).toBeGreaterThan(0);

    for (const { module, migrationFiles } of folders) {
      const schema = MODULE_SCHEMAS.find((candidate) => candidate.module === module);
      for (const file of migrationFiles) {
        const exports = (await import(join(SRC, module, 'migrations', file))) as Record<string, unknown>;
        const classes = Object.values(exports).filter(isMigrationClass);
        expect({ file, classes: classes.length }).toEqual({ file, classes: 1 });
        expect({ file, listed: schema?.migrations.includes(classes[0]) ?? false }).toEqual({
          file,
          listed: true,
        });
      }
    }
  });

  it('keeps each module’s migrations in its own folder, as <timestamp>-<Name>.ts holding class <Name><timestamp>', () => {
    for (const schema of MODULE_SCHEMAS) {
      const files = moduleFolders().find((folder) => folder.module === schema.module)?.migrationFiles ?? [];
      for (const migration of schema.migrations) {
        const [, name, timestamp] = /^(.+?)(\d{13})$/.exec(migration.name) ?? [];
        expect({ migration: migration.name, file: files.includes(`${timestamp}-${name}.ts`) }).toEqual({
          migration: migration.name,
          file: true,
        });
        // TypeORM records a migration by this name; a deployed database must recognise it.
        expect(new migration().name).toBe(migration.name);
      }
    }
  });

  it('has no migration or entity twice, and no two migrations with one timestamp', () => {
    const timestamps = ALL_MIGRATIONS.map((migration) => migration.name.slice(-13));

    expect(new Set(ALL_MIGRATIONS).size).toBe(ALL_MIGRATIONS.length);
    expect(new Set(timestamps).size).toBe(timestamps.length);
    expect(new Set(ALL_ENTITIES).size).toBe(ALL_ENTITIES.length);
  });
});
