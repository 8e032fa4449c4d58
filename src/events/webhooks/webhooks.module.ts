import { DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ProcessConfig } from '../../config/app-config';
import { IdempotencyModule } from '../../idempotency/idempotency.module';
import { EVENTS_OPTIONS } from '../events.service';
import { AddressPolicy } from './address-policy';
import { DeliverySender } from './delivery-sender';
import { DeliveryThread } from './delivery-thread';
import { ATTEMPT_TIMEOUT_MS, WebhookDispatcher } from './webhook-dispatcher';
import { WebhookEndpointsController } from './webhook-endpoints.controller';
import { WebhookEndpointsService } from './webhook-endpoints.service';
import { WEBHOOK_ENTITIES } from './webhooks.schema';

/** Webhook endpoints as an API resource, and their deliveries, sent by `all` and `worker` processes. */
@Module({})
export class WebhooksModule {
  static forRoot(role: ProcessConfig['role']): DynamicModule {
    const routes = role !== 'worker';
    return {
      module: WebhooksModule,
      imports: [TypeOrmModule.forFeature(WEBHOOK_ENTITIES), ...(routes ? [IdempotencyModule] : [])],
      controllers: routes ? [WebhookEndpointsController] : [],
      providers: [
        WebhookEndpointsService,
        ...(role === 'api'
          ? []
          : [
              WebhookDispatcher,
              {
                provide: DeliverySender,
                inject: [EVENTS_OPTIONS],
                useFactory: (policy: AddressPolicy): DeliverySender => {
                  if (role !== 'worker') return new DeliveryThread(policy, ATTEMPT_TIMEOUT_MS);
                  // Loaded here: an `all` process sends from its thread, and never needs the HTTP client.
                  // eslint-disable-next-line @typescript-eslint/no-require-imports
                  const { InlineSender } = require('./deliver') as typeof import('./deliver');
                  return new InlineSender(policy, ATTEMPT_TIMEOUT_MS);
                },
              },
            ]),
      ],
    };
  }
}
