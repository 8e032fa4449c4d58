import { Column, Entity, Index } from 'typeorm';
import { int64AsNumber } from '../common/validation/int64';
import { IdColumn } from '../database/dialect';

/** One change made through the API; written in the change's transaction, never changed after. */
@Entity({ name: 'audit_events' })
@Index('idx_audit_events_key', ['keyId', 'id'])
@Index('idx_audit_events_resource', ['resource', 'id'])
// Partial: a key's change (no subject) writes no entry in it.
@Index('idx_audit_events_subject', ['subject', 'id'], { where: 'subject IS NOT NULL' })
export class AuditEventEntity {
  @IdColumn()
  id!: number;

  @Index('idx_audit_events_at')
  @Column({ type: 'bigint', transformer: int64AsNumber })
  at!: number;

  /** The stored key that made the change; null for an `API_KEYS` entry. */
  @Column({ name: 'key_id', type: 'bigint', nullable: true, transformer: int64AsNumber })
  keyId!: number | null;

  @Column({ name: 'key_name', type: 'varchar', length: 100, nullable: true })
  keyName!: string | null;

  @Column({ type: 'varchar', length: 255, nullable: true })
  subject!: string | null;

  @Column({ name: 'client_id', type: 'varchar', length: 255, nullable: true })
  clientId!: string | null;

  @Column({ type: 'varchar', length: 100 })
  operation!: string;

  @Column({ type: 'varchar', length: 100 })
  resource!: string;

  @Column({ name: 'resource_id', type: 'bigint', transformer: int64AsNumber })
  resourceId!: number;

  @Column({ type: 'integer' })
  outcome!: number;

  @Column({ name: 'request_id', type: 'varchar', length: 128 })
  requestId!: string;

  @Column({ name: 'client_address', type: 'varchar', length: 64 })
  clientAddress!: string;
}
