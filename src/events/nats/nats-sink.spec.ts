import { randomBytes } from 'node:crypto';
import { connect, JetStreamManager, NatsConnection } from 'nats';
import { createServer } from 'node:net';
import { NatsSink } from './nats-sink';

/** The machine's NATS server with JetStream; each test run has a stream and subjects of its own. */
const URL = process.env.TEST_NATS_URL ?? 'nats://127.0.0.1:4222';
const events = (ids: number[]) =>
  ids.map((id) => ({
    id: `evt_${String(id).padStart(16, '0')}`,
    type: id % 2 ? 'pet.created' : 'pet.updated',
    timestamp: new Date(0).toISOString(),
    data: { id, version: 1 },
  }));

describe('NatsSink (on the real NATS server)', () => {
  const suffix = randomBytes(4).toString('hex');
  const options = {
    stream: `TEST_EVENTS_${suffix}`,
    subjectPrefix: `test.${suffix}.events`,
    timeoutMs: 2000,
  };
  let connection: NatsConnection;
  let manager: JetStreamManager;

  beforeAll(async () => {
    connection = await connect({ servers: URL });
    manager = await connection.jetstreamManager();
  });
  afterAll(async () => {
    await manager.streams.delete(options.stream).catch(() => undefined);
    await connection.close();
  });

  const stored = async () => {
    const { state } = await manager.streams.info(options.stream);
    const messages = [];
    for (let seq = state.first_seq; seq <= state.last_seq && state.messages > 0; seq++) {
      const message = await manager.streams.getMessage(options.stream, { seq });
      messages.push({
        subject: message.subject,
        id: message.header.get('Nats-Msg-Id'),
        body: message.json(),
      });
    }
    return messages;
  };

  it('makes the stream and publishes each event on its type, with its id as Nats-Msg-Id', async () => {
    const sink = await NatsSink.connect(URL, options);
    try {
      await sink.publish(events([1, 2, 3]));
      expect(await stored()).toEqual(
        events([1, 2, 3]).map((event) => ({
          subject: `${options.subjectPrefix}.${event.type}`,
          id: event.id,
          body: event,
        })),
      );
    } finally {
      await sink.close();
    }
  });

  it('keeps one message per id when a batch is published again (a relay that crashed after publishing)', async () => {
    const sink = await NatsSink.connect(URL, options); // the stream exists: it is reused as it is
    try {
      await sink.publish(events([2, 3, 4]));
      expect((await stored()).map((message) => message.id)).toEqual(
        events([1, 2, 3, 4]).map((event) => event.id),
      );
    } finally {
      await sink.close();
    }
  });

  it('rejects, and does not hang, when no NATS server answers', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as { port: number };
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const started = Date.now();
    await expect(
      NatsSink.connect(`nats://127.0.0.1:${port}`, { ...options, timeoutMs: 500 }),
    ).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
