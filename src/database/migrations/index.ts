import { CreatePets1763776800000 } from './1763776800000-CreatePets';

/** Every migration, in order. Listed by class so the same list works from ts and from dist. */
export const MIGRATIONS = [CreatePets1763776800000];
