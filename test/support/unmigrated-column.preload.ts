import { IDEMPOTENCY_SCHEMA } from '../../src/idempotency/idempotency.schema';
import { RecordWithNickname } from './unmigrated-column';

// Loaded with `node -r` before a command: the command then sees an entity column without a migration.
(IDEMPOTENCY_SCHEMA.entities as (new () => object)[]).splice(
  0,
  IDEMPOTENCY_SCHEMA.entities.length,
  RecordWithNickname,
);
