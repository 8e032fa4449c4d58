import { Column, Entity } from 'typeorm';
import { entitiesOf } from '../../src/database/module-schema';
import { SCHEMAS } from '../../src/features';
import { PetEntity } from '../../src/pets/pet.entity';

/** The pets entity with a column that no migration creates. */
@Entity({ name: 'pets' })
export class PetWithNickname extends PetEntity {
  @Column({ type: 'varchar', length: 40, nullable: true })
  nickname!: string | null;
}

/** Every entity of the service, with the pets entity replaced by `PetWithNickname`. */
export function entitiesWithUnmigratedColumn(): (new () => object)[] {
  return entitiesOf(SCHEMAS).map((entity) => (entity === PetEntity ? PetWithNickname : entity));
}
