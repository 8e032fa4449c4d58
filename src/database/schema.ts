import { AUTH_SCHEMA } from '../auth/auth.schema';
import { IDEMPOTENCY_SCHEMA } from '../idempotency/idempotency.schema';
import { PETS_SCHEMA } from '../pets/pets.schema';
import { ModuleSchema } from './module-schema';

/**
 * The schema of every feature module: the one list a module with tables is added to. The app
 * loads its entities from the modules it imports (`TypeOrmModule.forFeature`); the commands
 * that open the database without Nest (the TypeORM CLI, the key CLI, the migration check) take
 * them from here. Tests check that both agree and that no migration file is left out.
 */
export const MODULE_SCHEMAS: readonly ModuleSchema[] = [PETS_SCHEMA, AUTH_SCHEMA, IDEMPOTENCY_SCHEMA];

export const ALL_ENTITIES = MODULE_SCHEMAS.flatMap((schema) => schema.entities);

/** Listed by class, so the same list works from the sources and from dist. */
export const ALL_MIGRATIONS = MODULE_SCHEMAS.flatMap((schema) => schema.migrations);
