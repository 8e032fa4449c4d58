import { ModuleSchema } from '../database/module-schema';
import { PetEntity } from './pet.entity';
import { CreatePets1763776800000 } from './migrations/1763776800000-CreatePets';
import { AddPetVersions1795824000000 } from './migrations/1795824000000-AddPetVersions';

/** The tables of the animals module: add each new migration of `migrations/` here. */
export const PETS_SCHEMA: ModuleSchema = {
  module: 'pets',
  entities: [PetEntity],
  migrations: [CreatePets1763776800000, AddPetVersions1795824000000],
};
