import { MigrationInterface } from 'typeorm';

/**
 * The tables one feature module owns: its entities and the migrations that create and change
 * them, kept in `src/<module>/migrations/`. The module passes `entities` to
 * `TypeOrmModule.forFeature`; `src/database/schema.ts` collects every module's schema.
 */
export interface ModuleSchema {
  /** The module's folder under `src/`, which holds its `migrations/` folder. */
  readonly module: string;
  readonly entities: readonly (new () => object)[];
  /** Migration classes; TypeORM runs them in the order of the timestamps in their names. */
  readonly migrations: readonly (new () => MigrationInterface)[];
}
