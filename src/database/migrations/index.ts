import { CreatePets1763776800000 } from './1763776800000-CreatePets';
import { CreateApiKeys1763863200000 } from './1763863200000-CreateApiKeys';
import { CreateIdempotencyKeys1763949600000 } from './1763949600000-CreateIdempotencyKeys';

/** Every migration, in order. Listed by class so the same list works from ts and from dist. */
export const MIGRATIONS = [
  CreatePets1763776800000,
  CreateApiKeys1763863200000,
  CreateIdempotencyKeys1763949600000,
];
