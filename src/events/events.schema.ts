import { ModuleSchema } from '../database/module-schema';
import { EventEntity } from './event.entity';
import { CreateEvents1796601600000 } from './migrations/1796601600000-CreateEvents';
import { OutboxPositionEntity } from './outbox-position.entity';
import { WEBHOOK_ENTITIES } from './webhooks/webhooks.schema';

export const EVENTS_SCHEMA: ModuleSchema = {
  module: 'events',
  entities: [EventEntity, ...WEBHOOK_ENTITIES, OutboxPositionEntity],
  migrations: [CreateEvents1796601600000],
};
