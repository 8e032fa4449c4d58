import { FEATURES } from '../features';
import { ModuleSchema } from './module-schema';

/**
 * The schema of every feature module, in the order of `FEATURES` (src/features.ts). The app
 * loads its entities from the modules it imports (`TypeOrmModule.forFeature`); the commands
 * that open the database without Nest take them from here. Tests check that both agree and
 * that no migration file is left out.
 */
export const MODULE_SCHEMAS: readonly ModuleSchema[] = FEATURES.flatMap((feature) =>
  feature.schema ? [feature.schema] : [],
);

export const ALL_ENTITIES = MODULE_SCHEMAS.flatMap((schema) => schema.entities);

/** Listed by class, so the same list works from the sources and from dist. */
export const ALL_MIGRATIONS = MODULE_SCHEMAS.flatMap((schema) => schema.migrations);
