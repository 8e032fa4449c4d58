import { Column, Entity, ForeignKey, Index } from 'typeorm';
import { int64AsNumber } from '../../common/validation/int64';
import { IdColumn } from '../../database/dialect';
import { WebhookEndpointEntity } from './webhook-endpoint.entity';

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

/** One attempt, as the deliveries list shows it. */
export interface DeliveryAttempt {
  at: number;
  durationMs: number;
  status?: number;
  error?: string;
  excerpt?: string;
}

/** One event for one endpoint. While pending, `nextAttemptAt` is also the lease of the attempt in flight. */
@Entity({ name: 'webhook_deliveries' })
@Index('idx_webhook_deliveries_due', ['status', 'nextAttemptAt'])
@Index('idx_webhook_deliveries_endpoint', ['endpointId', 'id'])
export class WebhookDeliveryEntity {
  @IdColumn()
  id!: number;

  @Column({ name: 'endpoint_id', type: 'bigint', transformer: int64AsNumber })
  @ForeignKey(() => WebhookEndpointEntity, { name: 'fk_webhook_deliveries_endpoint', onDelete: 'CASCADE' })
  endpointId!: number;

  @Column({ name: 'event_id', type: 'bigint', transformer: int64AsNumber })
  eventId!: number;

  @Column({ name: 'event_type', type: 'varchar', length: 100 })
  eventType!: string;

  @Column({ type: 'varchar', length: 16 })
  status!: DeliveryStatus;

  /** Attempts since it was made or last re-sent: the place in the retry schedule. */
  @Column({ type: 'integer' })
  tries!: number;

  @Column({ name: 'next_attempt_at', type: 'bigint', transformer: int64AsNumber })
  nextAttemptAt!: number;

  @Column({ name: 'created_at', type: 'bigint', transformer: int64AsNumber })
  createdAt!: number;

  @Column({ name: 'delivered_at', type: 'bigint', nullable: true, transformer: int64AsNumber })
  deliveredAt!: number | null;

  /** The last attempts, newest last, as JSON. */
  @Column({ type: 'text' })
  attempts!: string;
}
