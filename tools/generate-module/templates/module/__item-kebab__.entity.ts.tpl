// @if references
import { Check, Column, Entity, ForeignKey, Index } from 'typeorm';
// @end
// @if !references
import { Check, Column, Entity, Index } from 'typeorm';
// @end
import { int64AsNumber } from '../common/validation/int64';
import { IdColumn } from '../database/dialect';
// @if defaultState
import { DEFAULT___ITEM___STATUS, __Item__Status } from './__item-kebab__-status';
// @end
// @if !defaultState
import { __Item__Status } from './__item-kebab__-status';
// @end
// @each reference
import { __RefEntity__ } from '../__ref_folder__/__ref_entity_file__';
// @end

/**
 * One row of the `__items_table__` table, __a_noun__ as stored. Every column, CHECK, index and
 * foreign key declared here must match what the migrations create: `npm run migration:check`
 * compares them.
 */
@Entity({ name: '__items_table__' })
@Check('chk___items_table___status', `"status" IN (__STATES__)`)
@Index('idx___items_table___status_id', ['status', 'id'])
export class __Item__Entity {
  @IdColumn()
  id!: number;

  @Column({ type: 'varchar', length: 255 })
  name!: string;
  // @each field

  // @if text
  // @if optional
  @Column({ name: '__field_column__', type: 'varchar', length: __field_max__, nullable: true })
  __field__!: string | null;
  // @end
  // @if !optional
  @Column({ name: '__field_column__', type: 'varchar', length: __field_max__ })
  __field__!: string;
  // @end
  // @end
  // @if int64
  // @if optional
  @Column({ name: '__field_column__', type: 'bigint', nullable: true, transformer: int64AsNumber })
  __field__!: number | null;
  // @end
  // @if !optional
  @Column({ name: '__field_column__', type: 'bigint', transformer: int64AsNumber })
  __field__!: number;
  // @end
  // @end
  // @end
  // @if defaultState

  @Column({ type: 'varchar', length: 16, default: DEFAULT___ITEM___STATUS })
  status!: __Item__Status;
  // @end
  // @if !defaultState

  @Column({ type: 'varchar', length: 16, nullable: true })
  status!: __Item__Status | null;
  // @end
  // @each reference

  /** The id of an existing __ref__: the database refuses a row naming none, and the delete of one still named. */
  @Column({ name: '__ref_column__', type: 'bigint', transformer: int64AsNumber })
  @ForeignKey(() => __RefEntity__, { name: '__ref_fk__', onDelete: 'RESTRICT' })
  @Index('__ref_index__')
  __ref__Id!: number;
  // @end

  /**
   * 1 when created, one more with each change: the `ETag` of its answers (64-bit). No default: one
   * would make TypeORM read every inserted row back for it.
   */
  @Column({ type: 'bigint', transformer: int64AsNumber })
  version!: number;
}
