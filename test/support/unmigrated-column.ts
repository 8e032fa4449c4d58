import { Column, Entity } from 'typeorm';
import { entitiesOf } from '../../src/database/module-schema';
import { SCHEMAS } from '../../src/features';
import { IdempotencyRecordEntity } from '../../src/idempotency/idempotency-record.entity';

/**
 * The idempotency record entity with a column that no migration creates (an entity no foreign key
 * refers to, so that every other entity still finds the ones it refers to).
 */
@Entity({ name: 'idempotency_keys' })
export class RecordWithNickname extends IdempotencyRecordEntity {
  @Column({ type: 'varchar', length: 40, nullable: true })
  nickname!: string | null;
}

/** Every entity of the service, with the idempotency record entity replaced by `RecordWithNickname`. */
export function entitiesWithUnmigratedColumn(): (new () => object)[] {
  return entitiesOf(SCHEMAS).map((entity) =>
    entity === IdempotencyRecordEntity ? RecordWithNickname : entity,
  );
}
