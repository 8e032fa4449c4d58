import { MigrationInterface } from 'typeorm';

export interface ModuleSchema {
  readonly module: string;
  readonly entities: readonly (new () => object)[];
  readonly migrations: readonly (new () => MigrationInterface)[];
}

export const entitiesOf = (schemas: readonly ModuleSchema[]) => schemas.flatMap((schema) => schema.entities);

export const migrationsOf = (schemas: readonly ModuleSchema[]) =>
  schemas.flatMap((schema) => schema.migrations);
