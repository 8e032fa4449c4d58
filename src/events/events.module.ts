import { DynamicModule, Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { EVENT_OUTBOX } from '../common/event-outbox';
import { durationsMs, EventsConfig } from '../config/app-config';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { EventsController } from './events.controller';
import { EVENTS_SCHEMA } from './events.schema';
import { EVENTS_OPTIONS, EventsService } from './events.service';
import { NATS_URL, NatsRelay } from './nats-relay';
import { DELIVERY_OPTIONS, WebhookDispatcher } from './webhook-dispatcher';
import { WebhookEndpointsController } from './webhook-endpoints.controller';
import { ADDRESS_POLICY, WebhookEndpointsService } from './webhook-endpoints.service';

/** Global: every store writes its changes' events through EVENT_OUTBOX. */
@Global()
@Module({})
export class EventsModule {
  static forRoot(config: EventsConfig): DynamicModule {
    return {
      module: EventsModule,
      imports: [TypeOrmModule.forFeature([...EVENTS_SCHEMA.entities]), IdempotencyModule],
      controllers: [EventsController, WebhookEndpointsController],
      providers: [
        { provide: EVENTS_OPTIONS, useValue: config },
        {
          provide: DELIVERY_OPTIONS,
          useValue: { retryScheduleMs: durationsMs(config.retrySchedule), concurrency: config.concurrency },
        },
        { provide: ADDRESS_POLICY, useValue: config },
        { provide: NATS_URL, useValue: config.natsUrl },
        EventsService,
        { provide: EVENT_OUTBOX, useExisting: EventsService },
        WebhookEndpointsService,
        WebhookDispatcher,
        NatsRelay,
      ],
      exports: [EVENT_OUTBOX],
    };
  }
}
