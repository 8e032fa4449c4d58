import { ModuleSchema } from '../database/module-schema';
import { CreatePets1763776800000 } from './migrations/1763776800000-CreatePets';
import { PetEntity } from './pet.entity';

export const PETS_SCHEMA: ModuleSchema = {
  module: 'pets',
  entities: [PetEntity],
  migrations: [CreatePets1763776800000],
};
