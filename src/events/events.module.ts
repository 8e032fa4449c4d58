import { DynamicModule, Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { EVENT_OUTBOX } from '../common/event-outbox';
import { EventsConfig, ProcessConfig } from '../config/app-config';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { EventsController } from './events.controller';
import { EventEntity } from './event.entity';
import { EVENTS_OPTIONS, EventsService } from './events.service';
import { NatsModule } from './nats/nats.module';
import { OutboxPositionEntity } from './outbox-position.entity';
import { WebhooksModule } from './webhooks/webhooks.module';

/**
 * Global: every store writes its changes' events through EVENT_OUTBOX. The feed and the outbox
 * are here; webhooks/ and nats/ consume the outbox. An `api` process sends nothing and relays
 * nothing; a `worker` answers no request (docs/deployment.md#workers).
 */
@Global()
@Module({})
export class EventsModule {
  static forRoot(config: EventsConfig, role: ProcessConfig['role'] = 'all'): DynamicModule {
    const routes = role !== 'worker';
    return {
      module: EventsModule,
      imports: [
        TypeOrmModule.forFeature([EventEntity, OutboxPositionEntity]),
        ...(routes ? [IdempotencyModule] : []),
        WebhooksModule.forRoot(role),
        ...(role === 'api' ? [] : [NatsModule]),
      ],
      controllers: routes ? [EventsController] : [],
      providers: [
        { provide: EVENTS_OPTIONS, useValue: config },
        EventsService,
        { provide: EVENT_OUTBOX, useExisting: EventsService },
      ],
      exports: [EVENT_OUTBOX, EVENTS_OPTIONS, EventsService],
    };
  }
}
