import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import { int64AsNumber } from '../common/validation/int64';
import { PetStatus } from './pet-status';

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
