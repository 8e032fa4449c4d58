import { ModuleSchema } from '../database/module-schema';
import { EventEntity } from './event.entity';
import { CreateEvents1796601600000 } from './migrations/1796601600000-CreateEvents';
import { OutboxPositionEntity } from './outbox-position.entity';
import { WebhookDeliveryEntity } from './webhook-delivery.entity';
import { WebhookEndpointEntity } from './webhook-endpoint.entity';

export const EVENTS_SCHEMA: ModuleSchema = {
  module: 'events',
  entities: [EventEntity, WebhookEndpointEntity, WebhookDeliveryEntity, OutboxPositionEntity],
  migrations: [CreateEvents1796601600000],
};
