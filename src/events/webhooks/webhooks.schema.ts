import { WebhookDeliveryEntity } from './webhook-delivery.entity';
import { WebhookEndpointEntity } from './webhook-endpoint.entity';

/** The webhooks' tables, which the events' migration creates: their entities and nothing more, for the CLIs. */
export const WEBHOOK_ENTITIES = [WebhookEndpointEntity, WebhookDeliveryEntity];
