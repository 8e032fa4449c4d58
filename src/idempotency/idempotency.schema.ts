import { ModuleSchema } from '../database/module-schema';
import { IdempotencyRecordEntity } from './idempotency-record.entity';
import { CreateIdempotencyKeys1763949600000 } from './migrations/1763949600000-CreateIdempotencyKeys';

export const IDEMPOTENCY_SCHEMA: ModuleSchema = {
  module: 'idempotency',
  entities: [IdempotencyRecordEntity],
  migrations: [CreateIdempotencyKeys1763949600000],
};
