import { BeforeApplicationShutdown, Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { EventsConfig } from '../../config/app-config';
import { EventEntity } from '../event.entity';
import { EventDto } from '../dto/event.dto';
import { EVENTS_OPTIONS, EventsService } from '../events.service';
import { NatsSink } from './nats-sink';
import { Transactions } from '../../database/transactions';
import { consumeOutbox, OUTBOX_BATCH, Ticker } from '../outbox-consumer';

/** The outbox to NATS JetStream, published before the position moves: the stream drops ids it has. */
@Injectable()
export class NatsRelay implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private sink?: NatsSink;
  private readonly ticker: Ticker;

  constructor(
    @InjectDataSource() private readonly connection: DataSource,
    private readonly transactions: Transactions,
    @Inject(EVENTS_OPTIONS) private readonly config: Pick<EventsConfig, 'natsUrl' | 'pollMs'>,
    events: EventsService,
  ) {
    this.ticker = new Ticker(() => this.tick(), 'Events', 'publishing events to NATS waits', config.pollMs);
    if (config.natsUrl !== null) events.onCommitted(() => this.ticker.wake());
  }

  onApplicationBootstrap(): void {
    if (this.config.natsUrl !== null) this.ticker.wake();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.ticker.stop();
    await this.sink?.close();
  }

  /** Connects first (again each tick while NATS is away: the service starts without it). */
  private async tick(): Promise<void> {
    const sink = (this.sink ??= await NatsSink.connect(this.config.natsUrl!));
    const before = (events: EventEntity[]) => sink.publish(events.map((event) => EventDto.fromEntity(event)));
    while ((await consumeOutbox(this.connection, this.transactions, 'nats', { before })) === OUTBOX_BATCH);
  }
}
