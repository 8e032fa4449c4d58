import { Column, Entity, Index, PrimaryGeneratedColumn, ValueTransformer } from 'typeorm';
import { PetStatus } from './pet-status';

/** Drivers may hand 64-bit integers back as strings; the API's values stay below 2^53. */
const int64AsNumber: ValueTransformer = {
  to: (value: number | undefined) => value,
  from: (value: string | number | null) => (value === null ? null : Number(value)),
};

@Entity({ name: 'pets' })
@Index('idx_pets_status_id', ['status', 'id'])
export class PetEntity {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id!: number;

  @Column({ type: 'varchar', length: 255 })
  name!: string;

  @Column({ name: 'category_id', type: 'bigint', transformer: int64AsNumber })
  categoryId!: number;

  @Column({ type: 'varchar', length: 16, nullable: true })
  status!: PetStatus | null;
}
