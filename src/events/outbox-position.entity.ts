import { Column, Entity, PrimaryColumn } from 'typeorm';
import { int64AsNumber } from '../common/validation/int64';

/** How far a consumer of the outbox (webhooks, NATS) has read; moved by compare-and-set. */
@Entity({ name: 'outbox_positions' })
export class OutboxPositionEntity {
  @PrimaryColumn({ type: 'varchar', length: 32 })
  name!: string;

  @Column({ type: 'bigint', transformer: int64AsNumber })
  position!: number;
}
