import { Column, Entity, Index } from 'typeorm';
import { int64AsNumber } from '../common/validation/int64';
import { IdColumn } from '../database/dialect';

/** The digest of the first request's body and, once done, the response to replay; times in epoch ms. */
@Entity({ name: 'idempotency_keys' })
@Index('uq_idempotency_owner_key', ['owner', 'idempotencyKey'], { unique: true })
export class IdempotencyRecordEntity {
  @IdColumn()
  id!: number;

  /** SHA-256 of the API key that sent it: keys of different clients never meet. */
  @Column({ type: 'varchar', length: 64 })
  owner!: string;

  @Column({ name: 'idempotency_key', type: 'varchar', length: 255 })
  idempotencyKey!: string;

  @Column({ name: 'request_hash', type: 'varchar', length: 64 })
  requestHash!: string;

  @Column({ type: 'varchar', length: 16 })
  state!: 'in_flight' | 'done';

  @Column({ name: 'status_code', type: 'integer', nullable: true })
  statusCode!: number | null;

  @Column({ name: 'response_body', type: 'text', nullable: true })
  responseBody!: string | null;

  @Column({ type: 'varchar', length: 255, nullable: true })
  location!: string | null;

  @Column({ name: 'created_at', type: 'bigint', transformer: int64AsNumber })
  createdAt!: number;

  @Index('idx_idempotency_expires_at')
  @Column({ name: 'expires_at', type: 'bigint', transformer: int64AsNumber })
  expiresAt!: number;
}
