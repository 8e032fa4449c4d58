import { Check, Column, Entity, Index } from 'typeorm';
import { int64AsNumber } from '../common/validation/int64';
import { IdColumn } from '../database/dialect';
import { PetStatus } from './pet-status';

/**
 * One row of the `pets` table, an animal as stored. Every column, CHECK, index and
 * foreign key declared here must match what the migrations create: `npm run migration:check`
 * compares them.
 */
@Entity({ name: 'pets' })
@Check('chk_pets_status', `"status" IN ('available', 'pending', 'sold')`)
@Index('idx_pets_status_id', ['status', 'id'])
export class PetEntity {
  @IdColumn()
  id!: number;

  @Column({ type: 'varchar', length: 255 })
  name!: string;

  @Column({ name: 'category_id', type: 'bigint', transformer: int64AsNumber })
  categoryId!: number;

  @Column({ type: 'varchar', length: 16, nullable: true })
  status!: PetStatus | null;

  /**
   * 1 when created, one more with each change: the `ETag` of its answers (64-bit). No default: one
   * would make TypeORM read every inserted row back for it.
   */
  @Column({ type: 'bigint', transformer: int64AsNumber })
  version!: number;
}
