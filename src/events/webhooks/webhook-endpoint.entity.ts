import { Column, Entity } from 'typeorm';
import { int64AsNumber } from '../../common/validation/int64';
import { IdColumn } from '../../database/dialect';

@Entity({ name: 'webhook_endpoints' })
export class WebhookEndpointEntity {
  @IdColumn()
  id!: number;

  @Column({ type: 'varchar', length: 2048 })
  url!: string;

  @Column({ type: 'varchar', length: 500, nullable: true })
  description!: string | null;

  /** Space-separated types or patterns (`pet.*`, `*`). */
  @Column({ name: 'event_types', type: 'varchar', length: 2000 })
  eventTypes!: string;

  @Column({ type: 'boolean' })
  enabled!: boolean;

  /** Why the service turned it off (a 410); null when a user did, or it is on. */
  @Column({ name: 'disabled_reason', type: 'varchar', length: 200, nullable: true })
  disabledReason!: string | null;

  /** Kept in the clear: each delivery is signed with it. */
  @Column({ type: 'varchar', length: 100 })
  secret!: string;

  @Column({ name: 'previous_secret', type: 'varchar', length: 100, nullable: true })
  previousSecret!: string | null;

  @Column({ name: 'previous_secret_expires_at', type: 'bigint', nullable: true, transformer: int64AsNumber })
  previousSecretExpiresAt!: number | null;

  @Column({ name: 'created_at', type: 'bigint', transformer: int64AsNumber })
  createdAt!: number;

  @Column({ type: 'bigint', transformer: int64AsNumber })
  version!: number;
}
