// @if !references
import { Check, Column, Entity } from 'typeorm';
// @end
// @if references
import { Check, Column, Entity, ForeignKey, Index } from 'typeorm';
import { int64AsNumber } from '../common/validation/int64';
// @end
import { IdColumn } from '../database/dialect';
import { DEFAULT___ITEM___STATUS, __Item__Status } from './__item-kebab__-status';
// @each reference
import { __RefEntity__ } from '../__ref_folder__/__ref_entity_file__';
// @end

/**
 * One row of the `__items_table__` table, __a_noun__ as stored. Every column, CHECK, index and
 * foreign key declared here must match what the migrations create: `npm run migration:check`
 * compares them.
 */
@Entity({ name: '__items_table__' })
@Check('chk___items_table___status', `"status" IN ('active', 'archived')`)
export class __Item__Entity {
  @IdColumn()
  id!: number;

  @Column({ type: 'varchar', length: 255 })
  name!: string;

  @Column({ type: 'varchar', length: 1000, nullable: true })
  description!: string | null;

  @Column({ type: 'varchar', length: 16, default: DEFAULT___ITEM___STATUS })
  status!: __Item__Status;
  // @each reference

  /** The id of an existing __ref__: the database refuses a row naming none, and the delete of one still named. */
  @Column({ name: '__ref_column__', type: 'bigint', transformer: int64AsNumber })
  @ForeignKey(() => __RefEntity__, { name: '__ref_fk__', onDelete: 'RESTRICT' })
  @Index('__ref_index__')
  __ref__Id!: number;
  // @end
  // @if mutable

  /** 1 when created, one more with each update: the `ETag` of its answers. */
  @Column({ type: 'integer' })
  version!: number;
  // @end
}
