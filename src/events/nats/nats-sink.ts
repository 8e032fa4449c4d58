import type { JetStreamClient, MsgHdrs, NatsConnection } from 'nats';
import type { EventDto } from '../dto/event.dto';

const DEFAULTS = { stream: 'PETSTORE_EVENTS', subjectPrefix: 'petstore.events', timeoutMs: 5000 };
/** The relay publishes a batch again after a crash: the stream drops ids it saw in this window. */
const DUPLICATE_WINDOW_NS = 10 * 60 * 1e9;

/** NATS JetStream: subject `<prefix>.<type>`, `Nats-Msg-Id` the event id, every PubAck awaited. */
export class NatsSink {
  private constructor(
    private readonly connection: NatsConnection,
    private readonly jetstream: JetStreamClient,
    private readonly subjectPrefix: string,
    private readonly timeoutMs: number,
    private readonly headers: () => MsgHdrs,
  ) {}

  /** Connects (then reconnects forever) and makes the stream if missing; an existing one is left as it is. */
  static async connect(servers: string, options: Partial<typeof DEFAULTS> = {}): Promise<NatsSink> {
    const { stream, subjectPrefix, timeoutMs } = { ...DEFAULTS, ...options };
    // Loaded on first use: most deployments relay to no NATS, and its 50 files stay out of their heap.
    const { connect, headers, RetentionPolicy } = await import('nats');
    const connection = await connect({
      servers: servers.split(',').map((server) => server.trim()),
      name: 'petstore',
      maxReconnectAttempts: -1,
      timeout: timeoutMs,
    });
    const manager = await connection
      .jetstreamManager({ timeout: timeoutMs })
      .catch(async (error: unknown) => {
        await connection.close();
        throw error;
      });
    const exists = () =>
      manager.streams.info(stream).then(
        () => true,
        () => false,
      );
    if (!(await exists()))
      await manager.streams
        .add({
          name: stream,
          subjects: [`${subjectPrefix}.>`],
          retention: RetentionPolicy.Limits,
          duplicate_window: DUPLICATE_WINDOW_NS,
        })
        .catch(async (error: unknown) => {
          if (!(await exists())) throw error;
        });
    const jetstream = connection.jetstream({ timeout: timeoutMs });
    return new NatsSink(connection, jetstream, subjectPrefix, timeoutMs, headers);
  }

  async publish(events: readonly EventDto[]): Promise<void> {
    if (this.connection.isClosed()) throw new Error('the NATS connection is closed');
    await Promise.all(
      events.map((event) => {
        const header = this.headers();
        header.set('Content-Type', 'application/json');
        const options = { msgID: event.id, headers: header, timeout: this.timeoutMs };
        return this.jetstream.publish(`${this.subjectPrefix}.${event.type}`, JSON.stringify(event), options);
      }),
    );
  }

  async close(): Promise<void> {
    await this.connection.drain().catch(() => this.connection.close());
  }
}
