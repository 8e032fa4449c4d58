import { Column, Entity } from 'typeorm';
import { IdColumn } from '../database/dialect';

/**
 * One row of the `__items_table__` table, __a_noun__ as stored. Every column, CHECK and index
 * declared here must match what the migrations create: `npm run migration:check` compares them.
 */
@Entity({ name: '__items_table__' })
export class __Item__Entity {
  @IdColumn()
  id!: number;

  @Column({ type: 'varchar', length: 255 })
  name!: string;

  @Column({ type: 'varchar', length: 1000, nullable: true })
  description!: string | null;
}
