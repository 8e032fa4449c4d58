import { Column, Entity, Index } from 'typeorm';
import { int64AsNumber } from '../common/validation/int64';
import { IdColumn } from '../database/dialect';

/** Never the key, only its SHA-256 digest and a prefix; times in epoch ms, the same on every database. */
@Entity({ name: 'api_keys' })
export class ApiKeyEntity {
  @IdColumn()
  id!: number;

  @Column({ type: 'varchar', length: 100 })
  name!: string;

  @Index('idx_api_keys_prefix')
  @Column({ type: 'varchar', length: 16 })
  prefix!: string;

  @Index('uq_api_keys_key_hash', { unique: true })
  @Column({ name: 'key_hash', type: 'varchar', length: 64 })
  keyHash!: string;

  /** Space-separated; `*`: every scope. */
  @Column({ type: 'varchar', length: 2000 })
  scopes!: string;

  @Column({ name: 'expires_at', type: 'bigint', nullable: true, transformer: int64AsNumber })
  expiresAt!: number | null;

  /** The secret a rotation replaced, valid until `previousExpiresAt`. */
  @Index('uq_api_keys_previous_key_hash', { unique: true })
  @Column({ name: 'previous_key_hash', type: 'varchar', length: 64, nullable: true })
  previousKeyHash!: string | null;

  @Column({ name: 'previous_expires_at', type: 'bigint', nullable: true, transformer: int64AsNumber })
  previousExpiresAt!: number | null;

  @Column({ name: 'created_at', type: 'bigint', transformer: int64AsNumber })
  createdAt!: number;

  @Column({ name: 'last_used_at', type: 'bigint', nullable: true, transformer: int64AsNumber })
  lastUsedAt!: number | null;

  @Column({ name: 'revoked_at', type: 'bigint', nullable: true, transformer: int64AsNumber })
  revokedAt!: number | null;
}
