import { Column, Entity, Index } from 'typeorm';
import { int64AsNumber } from '../common/validation/int64';
import { IdColumn } from '../database/dialect';

/** One committed change, written in its transaction (the outbox); ids become visible in order. */
@Entity({ name: 'events' })
@Index('idx_events_type', ['type', 'id'])
export class EventEntity {
  @IdColumn()
  id!: number;

  @Column({ type: 'varchar', length: 100 })
  type!: string;

  @Column({ type: 'bigint', transformer: int64AsNumber })
  at!: number;

  /** The record as answered after the change, with its `version`, as JSON. */
  @Column({ type: 'text' })
  data!: string;
}
