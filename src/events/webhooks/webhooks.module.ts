import { DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ProcessConfig } from '../../config/app-config';
import { IdempotencyModule } from '../../idempotency/idempotency.module';
import { WebhookDeliveryEntity } from './webhook-delivery.entity';
import { WebhookDispatcher } from './webhook-dispatcher';
import { WebhookEndpointEntity } from './webhook-endpoint.entity';
import { WebhookEndpointsController } from './webhook-endpoints.controller';
import { WebhookEndpointsService } from './webhook-endpoints.service';

export const WEBHOOK_ENTITIES = [WebhookEndpointEntity, WebhookDeliveryEntity];

/** Webhook endpoints as an API resource, and their deliveries, sent by `all` and `worker` processes. */
@Module({})
export class WebhooksModule {
  static forRoot(role: ProcessConfig['role']): DynamicModule {
    const routes = role !== 'worker';
    return {
      module: WebhooksModule,
      imports: [TypeOrmModule.forFeature(WEBHOOK_ENTITIES), ...(routes ? [IdempotencyModule] : [])],
      controllers: routes ? [WebhookEndpointsController] : [],
      providers: [WebhookEndpointsService, ...(role === 'api' ? [] : [WebhookDispatcher])],
    };
  }
}
