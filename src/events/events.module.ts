import { DynamicModule, Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { EVENT_OUTBOX } from '../common/event-outbox';
import { EventsConfig, ProcessConfig } from '../config/app-config';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { EventsController } from './events.controller';
import { EVENTS_SCHEMA } from './events.schema';
import { EVENTS_OPTIONS, EventsService } from './events.service';
import { NatsRelay } from './nats-relay';
import { WebhookDispatcher } from './webhook-dispatcher';
import { WebhookEndpointsController } from './webhook-endpoints.controller';
import { WebhookEndpointsService } from './webhook-endpoints.service';

/** Global: every store writes its changes' events through EVENT_OUTBOX. */
@Global()
@Module({})
export class EventsModule {
  /** An `api` process sends nothing; a `worker` answers no request (docs/deployment.md#workers). */
  static forRoot(config: EventsConfig, role: ProcessConfig['role'] = 'all'): DynamicModule {
    const routes = role !== 'worker';
    return {
      module: EventsModule,
      imports: [
        TypeOrmModule.forFeature([...EVENTS_SCHEMA.entities]),
        ...(routes ? [IdempotencyModule] : []),
      ],
      controllers: routes ? [EventsController, WebhookEndpointsController] : [],
      providers: [
        { provide: EVENTS_OPTIONS, useValue: config },
        EventsService,
        { provide: EVENT_OUTBOX, useExisting: EventsService },
        WebhookEndpointsService,
        ...(role === 'api' ? [] : [WebhookDispatcher, NatsRelay]),
      ],
      exports: [EVENT_OUTBOX],
    };
  }
}
