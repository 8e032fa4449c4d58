import { MigrationInterface } from 'typeorm';

/** The tables one feature module owns: its entities, and the migrations in `src/<module>/migrations/`. */
export interface ModuleSchema {
  readonly module: string;
  readonly entities: readonly (new () => object)[];
  /** TypeORM runs them in the order of the timestamps in their names. */
  readonly migrations: readonly (new () => MigrationInterface)[];
}

export const entitiesOf = (schemas: readonly ModuleSchema[]) => schemas.flatMap((schema) => schema.entities);

export const migrationsOf = (schemas: readonly ModuleSchema[]) =>
  schemas.flatMap((schema) => schema.migrations);
