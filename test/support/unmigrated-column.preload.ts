import { ALL_ENTITIES } from '../../src/database/schema';
import { entitiesWithUnmigratedColumn } from './unmigrated-column';

// Loaded with `node -r` before a command: the command then sees an entity column without a migration.
ALL_ENTITIES.splice(0, ALL_ENTITIES.length, ...entitiesWithUnmigratedColumn());
