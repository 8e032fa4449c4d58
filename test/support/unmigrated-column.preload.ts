import { PETS_SCHEMA } from '../../src/pets/pets.schema';
import { PetWithNickname } from './unmigrated-column';

// Loaded with `node -r` before a command: the command then sees an entity column without a migration.
(PETS_SCHEMA.entities as (new () => object)[]).splice(0, PETS_SCHEMA.entities.length, PetWithNickname);
