import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { dropTestSchemas, tempDir, TEST_KEY, testDatabaseEnv } from './support/app';
import { sparePort } from './support/ports';
import { sampleBody } from './support/samples';
import { exitOf, RunningService, spawnService, stopService } from './support/process';
import { startReceiver, until } from './support/webhook-receiver';

/** The TCP ports a process listens on (Linux): its sockets' inodes among the listening ones. */
function listeningPorts(pid: number): number[] {
  const inodes = new Set(
    readdirSync(`/proc/${pid}/fd`).flatMap((fd) => {
      const target = (() => {
        try {
          return readlinkSync(`/proc/${pid}/fd/${fd}`);
        } catch {
          return ''; // closed meanwhile
        }
      })();
      return /^socket:\[(\d+)\]$/.exec(target)?.slice(1) ?? [];
    }),
  );
  return ['tcp', 'tcp6']
    .flatMap((file) => readFileSync(`/proc/${pid}/net/${file}`, 'utf8').split('\n').slice(1))
    .map((line) => line.trim().split(/\s+/))
    .filter((fields) => fields[3] === '0A' && inodes.has(fields[9]))
    .map((fields) => parseInt(fields[1].split(':')[1], 16))
    .filter((port, index, ports) => ports.indexOf(port) === index);
}

/**
 * `PROCESS_ROLE=api` and `worker` as separate processes of the built service on one database (a
 * SQLite file, or a PostgreSQL schema in the PostgreSQL pass): the API sends nothing, a worker
 * answers nothing but its probes and metrics, and a worker killed -9 mid-flow loses nothing.
 */
describe('An API process and a delivery worker (e2e)', () => {
  const dir = tempDir();
  const database = testDatabaseEnv(join(dir.path, 'pets.sqlite'));
  const shared = {
    ...database,
    API_KEYS: TEST_KEY,
    WEBHOOK_ALLOW_HTTP: 'true',
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    WEBHOOK_RETRY_SCHEDULE: '500ms,500ms,500ms',
    LOG_LEVEL: 'warn',
  };
  const headers = { Authorization: `Bearer ${TEST_KEY}`, 'Content-Type': 'application/json' };
  let api: RunningService;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let secret: string;
  let endpointId: string;
  const running: RunningService[] = [];

  const startWorker = async (
    env: Record<string, string> = {},
  ): Promise<RunningService & { port: number }> => {
    const [healthPort, port] = [await sparePort(), await sparePort()];
    const worker = await spawnService({
      ...shared,
      PROCESS_ROLE: 'worker',
      HEALTH_PORT: String(healthPort),
      PORT: String(port),
      ...env,
    });
    running.push(worker);
    return { ...worker, port };
  };
  const createPets = async (count: number) => {
    const body = JSON.stringify(await sampleBody('NewPet'));
    const answers = await Promise.all(
      Array.from({ length: count }, () => fetch(`${api.url}/v1/pets`, { method: 'POST', headers, body })),
    );
    expect(answers.map((res) => res.status)).toEqual(answers.map(() => 201));
  };
  /** Every event id the feed holds. */
  const feed = async (): Promise<string[]> => {
    const ids: string[] = [];
    for (let after = ''; ;) {
      const page = (await (
        await fetch(`${api.url}/v1/events?limit=100${after}`, { headers })
      ).json()) as Array<{
        id: string;
      }>;
      ids.push(...page.map((event) => event.id));
      if (page.length < 100) return ids;
      after = `&after=${page[page.length - 1].id}`;
    }
  };
  /** The event ids of the endpoint's deliveries that wait for an attempt. */
  const pending = async (): Promise<string[]> =>
    (
      (await (
        await fetch(`${api.url}/v1/webhook-endpoints/${endpointId}/deliveries?status=pending&limit=100`, {
          headers,
        })
      ).json()) as Array<{ eventId: string }>
    ).map((delivery) => delivery.eventId);
  /** Ids of the events received with a valid signature. */
  const delivered = () => {
    const webhook = new Webhook(secret);
    return new Set(
      receiver.received.map(
        ({ body, headers: got }) =>
          (webhook.verify(body, got as Record<string, string>) as { id: string }).id,
      ),
    );
  };

  beforeAll(async () => {
    receiver = await startReceiver(() => 204);
    api = await spawnService({ ...shared, PROCESS_ROLE: 'api' });
    running.push(api);
    const endpoint = await fetch(`${api.url}/v1/webhook-endpoints`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ url: receiver.url }),
    });
    expect(endpoint.status).toBe(201);
    ({ secret, id: endpointId } = (await endpoint.json()) as { secret: string; id: string });
  }, 60_000);

  afterAll(async () => {
    for (const service of running) await stopService(service, 'SIGKILL');
    await receiver.close();
    await dropTestSchemas();
    dir.cleanup();
  });

  it('an api process writes the events and sends none of them', async () => {
    await createPets(5);
    // Longer than an `all` process takes to deliver (one poll of a second at most).
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect(receiver.received).toHaveLength(0);
    expect(await feed()).toHaveLength(5);
  });

  it('a worker delivers them, and listens on HEALTH_PORT only, for its probes and metrics', async () => {
    const worker = await startWorker();
    const ids = await feed();
    await until(() => delivered().size === ids.length, 15_000);
    expect([...delivered()].sort()).toEqual(ids);

    expect((await fetch(`${worker.url}/health/ready`)).status).toBe(200);
    const metrics = await fetch(`${worker.url}/metrics`);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toMatch(/^petstore_webhook_attempts_total\{result="success"\} [1-9]/m);
    const route = await fetch(`${worker.url}/v1/pets`, { headers });
    expect(route.status).toBe(404);
    expect(await route.json()).toMatchObject({ code: 'not_found', status: 404 });
    await expect(fetch(`http://127.0.0.1:${worker.port}/v1/pets`, { headers })).rejects.toThrow();
    expect(listeningPorts(worker.child.pid!)).toEqual([Number(new URL(worker.url).port)]);
  }, 30_000);

  it('a worker killed -9 mid-flow loses nothing: the next one delivers every event', async () => {
    const first = running[running.length - 1];
    const flow = (async () => {
      for (let round = 0; round < 10; round++) await createPets(4);
    })();
    await until(() => receiver.received.length > 10, 15_000);
    await stopService(first, 'SIGKILL');
    await flow;
    const second = await startWorker();
    const ids = await feed();
    // An attempt cut short keeps its lease (about 30 s) before it is sent again.
    await until(() => delivered().size === ids.length, 50_000);
    expect([...delivered()].sort()).toEqual(ids);
    // A graceful stop finishes what it claimed and exits 0.
    const exited = exitOf(second);
    second.child.kill('SIGTERM');
    expect((await exited).code).toBe(0);
  }, 90_000);

  it('a worker stopped gracefully gives back what it leased and did not send: the next sends it at once', async () => {
    const before = receiver.received.length;
    const earlier = new Set(await feed());
    // One attempt at a time, each answered after a second: the others it leased wait in the worker.
    receiver.answerAfterMs = 1000;
    const worker = await startWorker({ WEBHOOK_CONCURRENCY: '1' });
    await createPets(4);
    await until(() => receiver.received.length > before, 15_000);
    const exited = exitOf(worker);
    worker.child.kill('SIGTERM');
    expect((await exited).code).toBe(0);
    expect(receiver.received.length - before).toBeLessThan(4);
    receiver.answerAfterMs = 0;
    await startWorker();
    const ids = await feed();
    // Well within the lease (30 s) that the stopped worker's leftovers would otherwise wait out.
    await until(() => delivered().size === ids.length, 10_000);
    expect([...delivered()].sort()).toEqual(ids);
    // The stopped worker recorded the attempt it finished: none is pending, none was sent twice.
    const made = ids.filter((id) => !earlier.has(id));
    await until(async () => !(await pending()).some((id) => made.includes(id)), 5_000);
    const sent = receiver.received.slice(before).map(({ headers: got }) => got['webhook-id']);
    expect(made.map((id) => sent.filter((other) => other === id).length)).toEqual([1, 1, 1, 1]);
  }, 60_000);

  it('a worker holds at most WEBHOOK_CONCURRENCY attempts at once, leased or claimed', async () => {
    for (const worker of running.filter((service) => service !== api)) await stopService(worker, 'SIGTERM');
    // Made while no worker runs, then more while it sends: claimed and leased deliveries together.
    await createPets(6);
    receiver.answerAfterMs = 200;
    receiver.mostOpen = 0;
    await startWorker({ WEBHOOK_CONCURRENCY: '2' });
    await createPets(6);
    const ids = await feed();
    await until(() => delivered().size === ids.length, 20_000);
    expect(receiver.mostOpen).toBe(2);
    receiver.answerAfterMs = 0;
  }, 40_000);

  it('a delivery leased but kept waiting is sent only as its endpoint stands when it starts', async () => {
    for (const worker of running.filter((service) => service !== api)) await stopService(worker, 'SIGTERM');
    const before = receiver.received.length;
    const earlier = new Set(await feed());
    // One attempt at a time, each answered after 2.5 s: the fourth waits past the 5 s a lease is kept.
    receiver.answerAfterMs = 2500;
    await startWorker({ WEBHOOK_CONCURRENCY: '1' });
    await createPets(4);
    await until(() => receiver.received.length > before, 15_000);
    const endpoint = `${api.url}/v1/webhook-endpoints/${endpointId}`;
    const etag = (await fetch(endpoint, { headers })).headers.get('etag')!;
    const disabled = await fetch(endpoint, {
      method: 'PATCH',
      headers: { ...headers, 'Content-Type': 'application/merge-patch+json', 'If-Match': etag },
      body: JSON.stringify({ enabled: false }),
    });
    expect(disabled.status).toBe(200);
    const made = (await feed()).filter((id) => !earlier.has(id));
    await until(async () => !(await pending()).some((id) => made.includes(id)), 20_000);
    const sent = receiver.received.slice(before).map(({ headers: got }) => got['webhook-id']);
    expect(made.filter((id) => sent.includes(id)).length).toBeLessThan(4);
  }, 60_000);
});
