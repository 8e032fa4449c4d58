import { Module } from '@nestjs/common';
import { NatsRelay } from './nats-relay';

/** The outbox relayed to NATS JetStream where `EVENTS_NATS_URL` is set; in `all` and `worker` processes. */
@Module({ providers: [NatsRelay] })
export class NatsModule {}
