import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { NestExpressApplication } from '@nestjs/platform-express';
import type * as PetStoreClientModule from '@petstore/client';
import type { PetStoreClient, PetStoreClientOptions } from '@petstore/client';
import { Client } from 'pg';
import { Webhook } from 'standardwebhooks';
import { startApp, TEST_DATABASE_URL, TEST_KEY } from './support/app';
import { TestIssuer } from './support/oidc-issuer';
import { sparePort } from './support/ports';
import {
  postgresBinaries,
  PostgresCluster,
  startCuttingProxy,
  startPostgresCluster,
} from './support/servers';
import { startReceiver, until } from './support/webhook-receiver';

/**
 * The TypeScript client package (clients/typescript, `@petstore/client`), built as a user gets
 * it (`npm run build:client`: types generated from openapi.yaml, ESM and CommonJS builds, their
 * declarations, the type checks of its misuses) and driven against the real service.
 */
const ROOT = join(__dirname, '..');
const PACKAGE = join(ROOT, 'clients', 'typescript');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let pkg: typeof PetStoreClientModule;

beforeAll(() => {
  const build = spawnSync('npm', ['run', '-s', 'build:client'], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 120_000,
  });
  if (build.status !== 0) throw new Error(`npm run build:client failed:\n${build.stdout}${build.stderr}`);
  // Loaded once built, as a user's code loads it: through the package's `require` export.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  pkg = require('@petstore/client') as typeof PetStoreClientModule;
}, 120_000);

/** A client whose every answer's status is recorded, in order. */
function recording(options: PetStoreClientOptions): { client: PetStoreClient; statuses: number[] } {
  const statuses: number[] = [];
  const client = pkg.createPetStoreClient({
    ...options,
    fetch: async (input, init) => {
      const response = await fetch(input, init);
      statuses.push(response.status);
      return response;
    },
  });
  return { client, statuses };
}

async function listening(
  env: Record<string, string> = {},
): Promise<{ app: NestExpressApplication; baseUrl: string }> {
  const app = await startApp(env);
  await app.listen(0, '127.0.0.1');
  return { app, baseUrl: `${await app.getUrl()}/v1` };
}

describe('The TypeScript client package (e2e)', () => {
  it('builds to ES modules and CommonJS, each with declarations, and loads both ways', () => {
    for (const format of ['esm', 'cjs']) {
      for (const file of ['index.js', 'index.d.ts', 'errors.d.ts', 'generated/schema.d.ts']) {
        expect(existsSync(join(PACKAGE, 'dist', format, file))).toBe(true);
      }
    }
    const exported = (args: string[]) =>
      spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8' }).stdout.trim();
    const names =
      'PetStoreConnectionError,PetStoreError,WebhookVerificationError,createPetStoreClient,verifyWebhook';
    expect(exported(['-e', 'console.log(Object.keys(require("@petstore/client")).sort().join())'])).toBe(
      names,
    );
    expect(
      exported([
        '--input-type=module',
        '-e',
        'const m = await import("@petstore/client"); console.log(Object.keys(m).sort().join())',
      ]),
    ).toBe(names);
  });

  describe('against the service', () => {
    let app: NestExpressApplication;
    let options: Extract<PetStoreClientOptions, { apiKey: string }>;
    let client: PetStoreClient;

    beforeAll(async () => {
      let baseUrl: string;
      ({ app, baseUrl } = await listening());
      options = { baseUrl, apiKey: TEST_KEY };
      client = pkg.createPetStoreClient(options);
    });

    afterAll(async () => {
      await app.close();
    });

    it('creates, gets, lists a page with its next cursor, and lists all pages to the end', async () => {
      const created = [];
      for (let i = 0; i < 5; i++)
        created.push(await client.pets.create({ name: `Paged ${i}`, categoryId: 31, status: 'pending' }));
      expect(created[0]).toEqual({
        id: expect.any(Number),
        name: 'Paged 0',
        categoryId: 31,
        status: 'pending',
      });
      expect(await client.pets.get(created[0].id)).toEqual(created[0]);

      const first = await client.pets.list({ status: 'pending', limit: 2 });
      expect(first.items).toEqual(created.slice(0, 2));
      expect(first.nextCursor).toEqual(expect.any(String));
      const second = await client.pets.list({ status: 'pending', limit: 2, cursor: first.nextCursor });
      expect(second.items).toEqual(created.slice(2, 4));

      const all = [];
      for await (const pet of client.pets.listAll({ status: 'pending', limit: 2 })) all.push(pet);
      expect(all).toEqual(created);
    });

    it('throws PetStoreError with status, code, message, details and the request id', async () => {
      const invalid = await client.pets.create({ name: ' ', categoryId: 1 }).catch((error: unknown) => error);
      expect(invalid).toBeInstanceOf(pkg.PetStoreError);
      expect(invalid).toMatchObject({
        status: 400,
        code: 'validation_failed',
        details: [{ field: 'name', message: expect.stringContaining('not blank') }],
        requestId: expect.stringMatching(/^[0-9a-f-]{36}$/),
        retryAfter: undefined,
      });

      await expect(client.pets.get(987654321)).rejects.toMatchObject({
        status: 404,
        code: 'not_found',
        message: 'No animal has id 987654321.',
      });
      const stranger = pkg.createPetStoreClient({ ...options, apiKey: 'not-a-key-of-this-service' });
      await expect(stranger.pets.list()).rejects.toMatchObject({ status: 401, code: 'unauthorized' });
    });

    it('create sends an Idempotency-Key: a create whose answer is lost is retried with it, and stored once', async () => {
      let lose = true;
      const keys: string[] = [];
      const losing = pkg.createPetStoreClient({
        ...options,
        // The request reaches the service and is answered; the answer never reaches the caller.
        fetch: async (input, init) => {
          const headers = input instanceof Request ? input.headers : new Headers(init?.headers);
          keys.push(headers.get('Idempotency-Key') ?? '');
          const response = await fetch(input, init);
          if (!lose) return response;
          lose = false;
          await response.arrayBuffer();
          throw new TypeError('fetch failed: the connection was reset');
        },
      });
      const pet = await losing.pets.create({ name: 'Answer lost once', categoryId: 32 });
      expect(keys).toHaveLength(2);
      expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
      expect(keys[1]).toBe(keys[0]);
      const all = [];
      for await (const stored of client.pets.listAll())
        if (stored.name === 'Answer lost once') all.push(stored);
      expect(all).toEqual([pet]);
    });

    it('two creates are two animals; one key given twice is one animal', async () => {
      const a = await client.pets.create({ name: 'Twice', categoryId: 33 });
      const b = await client.pets.create({ name: 'Twice', categoryId: 33 });
      expect(b.id).not.toBe(a.id);
      const c = await client.pets.create(
        { name: 'Keyed', categoryId: 33 },
        { idempotencyKey: 'client-spec-1' },
      );
      const d = await client.pets.create(
        { name: 'Keyed', categoryId: 33 },
        { idempotencyKey: 'client-spec-1' },
      );
      expect(d).toEqual(c);
    });

    it('gives up on what retrying cannot fix at once, without retrying it', async () => {
      let calls = 0;
      const counting = pkg.createPetStoreClient({
        ...options,
        fetch: (input, init) => {
          calls++;
          return fetch(input, init);
        },
      });
      await expect(counting.pets.get(987654322)).rejects.toMatchObject({ code: 'not_found' });
      expect(calls).toBe(1);
    });

    it('manages keys and reads their audit: a read-only key made through apiKeys is 403 insufficient_scope to write', async () => {
      const made = await client.apiKeys.create({ name: 'client reader', scopes: ['pets:read'] });
      const reader = pkg.createPetStoreClient({ ...options, apiKey: made.secret });

      expect((await reader.pets.list({ limit: 1 })).items.length).toBeLessThanOrEqual(1);
      await expect(reader.pets.create({ name: 'Nope', categoryId: 1 })).rejects.toMatchObject({
        status: 403,
        code: 'insufficient_scope',
      });
      await expect(client.apiKeys.update(made.id, { name: 'renamed' })).resolves.toMatchObject({
        name: 'renamed',
      });
      const rotated = await client.apiKeys.rotate(made.id, { graceSeconds: 0 });
      expect(rotated.secret).not.toBe(made.secret);
      await client.apiKeys.revoke(made.id);
      await expect(client.apiKeys.get(made.id)).resolves.toHaveProperty('revokedAt');
      const listed = await client.apiKeys.list({ limit: 100 });
      expect(listed.items.map((key) => key.id)).toContain(made.id);
      const audited = await client.auditEvents.list({ resource: 'api-keys', limit: 100 });
      expect(
        audited.items.filter((event) => event.resourceId === made.id).map((event) => event.operation),
      ).toEqual(['createApiKey', 'updateApiKey', 'rotateApiKey', 'revokeApiKey']);
    });
  });

  it("takes a token provider: each request asks it, and the service takes the identity provider's token", async () => {
    const issuer = await TestIssuer.start();
    const { app, baseUrl } = await listening({ OIDC_ISSUER: issuer.url, OIDC_AUDIENCE: issuer.audience });
    try {
      let asked = 0;
      const client = pkg.createPetStoreClient({
        baseUrl,
        token: () => {
          asked++;
          return issuer.token({ scope: 'pets:read pets:write' });
        },
      });
      const made = await client.pets.create({ name: 'Token', categoryId: 3 });
      expect((await client.pets.get(made.id)).name).toBe('Token');
      expect(asked).toBe(2);
      const reader = pkg.createPetStoreClient({ baseUrl, token: () => issuer.token({ scope: 'pets:read' }) });
      await expect(reader.pets.create({ name: 'No', categoryId: 3 })).rejects.toMatchObject({
        code: 'insufficient_scope',
        status: 403,
      });
    } finally {
      await app.close();
      await issuer.stop();
    }
  });

  it("passes its own tests (clients/typescript/test, Node's test runner)", () => {
    const run = spawnSync(process.execPath, ['--test', 'test/'], {
      cwd: PACKAGE,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect({ status: run.status, output: run.status === 0 ? '' : `${run.stdout}${run.stderr}` }).toEqual({
      status: 0,
      output: '',
    });
  });

  describe('events and webhook endpoints, against the service', () => {
    let app: NestExpressApplication;
    let options: Extract<PetStoreClientOptions, { apiKey: string }>;
    let client: PetStoreClient;

    beforeAll(async () => {
      let baseUrl: string;
      // A receiver on loopback, over http; a failed delivery is retried within a second.
      ({ app, baseUrl } = await listening({
        WEBHOOK_ALLOW_HTTP: 'true',
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        WEBHOOK_RETRY_SCHEDULE: '100ms,200ms,300ms',
      }));
      options = { baseUrl, apiKey: TEST_KEY };
      client = pkg.createPetStoreClient(options);
    });

    afterAll(async () => {
      await app.close();
    });

    /** The id of the newest event, if any: what a consumer that was away would list `after`. */
    async function lastEventId(): Promise<string | undefined> {
      let last: string | undefined;
      for await (const event of client.events.listAll({ limit: 100 })) last = event.id;
      return last;
    }

    it('lists events a page at a time and all of them through the Link header, by type and after an id', async () => {
      const start = await lastEventId();
      const after = start === undefined ? {} : { after: start };
      const pets = [];
      for (let i = 0; i < 3; i++)
        pets.push(await client.pets.create({ name: `Evented ${i}`, categoryId: 41, status: 'available' }));

      const first = await client.events.list({ ...after, type: 'pet.created', limit: 2 });
      expect(first.items.map((event) => event.data.id)).toEqual([pets[0].id, pets[1].id]);
      expect(first.items[0]).toEqual({
        id: expect.stringMatching(/^evt_\d{16}$/),
        type: 'pet.created',
        timestamp: expect.any(String),
        data: { ...pets[0], version: 1 },
      });
      expect(first.nextCursor).toEqual(expect.any(String));
      const second = await client.events.list({
        ...after,
        type: 'pet.created',
        limit: 2,
        cursor: first.nextCursor,
      });
      expect(second).toEqual({ items: [expect.objectContaining({ data: { ...pets[2], version: 1 } })] });

      const all = [];
      for await (const event of client.events.listAll({ ...after, type: 'pet.*', limit: 2 })) all.push(event);
      expect(all).toEqual([...first.items, ...second.items]);
      expect(all.map((event) => event.id)).toEqual(all.map((event) => event.id).sort());
      const rest = [];
      for await (const event of client.events.listAll({ after: all[0].id })) rest.push(event);
      expect(rest).toEqual(all.slice(1));
      await expect(client.events.list({ type: 'pet.lost' })).rejects.toMatchObject({
        status: 400,
        code: 'validation_failed',
      });
    });

    it('creates, gets, updates with If-Match, rotates and deletes a webhook endpoint', async () => {
      const made = await client.webhookEndpoints.create({
        url: 'http://127.0.0.1:9/client-hook',
        eventTypes: ['pet.created'],
        description: 'Client spec',
      });
      expect(made).toEqual({
        id: expect.any(Number),
        url: 'http://127.0.0.1:9/client-hook',
        description: 'Client spec',
        eventTypes: ['pet.created'],
        enabled: true,
        createdAt: expect.any(String),
        secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]+={0,2}$/),
      });
      const { secret, ...shown } = made;
      const read = await client.webhookEndpoints.get(made.id);
      expect(read).toEqual({ ...shown, etag: expect.any(String) });
      expect(read).not.toHaveProperty('secret');

      const changed = await client.webhookEndpoints.update(
        made.id,
        { description: null, enabled: false },
        { ifMatch: read.etag },
      );
      expect(changed).toEqual({ ...shown, description: undefined, enabled: false, etag: expect.any(String) });
      expect(changed).not.toHaveProperty('description');
      expect(changed.etag).not.toBe(read.etag);
      await expect(
        client.webhookEndpoints.update(made.id, { enabled: true }, { ifMatch: read.etag }),
      ).rejects.toMatchObject({ status: 412, code: 'precondition_failed' });
      await expect(
        client.webhookEndpoints.update(made.id, { eventTypes: ['pet.*'] }, { ifMatch: '*' }),
      ).resolves.toMatchObject({ eventTypes: ['pet.*'], enabled: false });
      const listed = await client.webhookEndpoints.list({ limit: 100 });
      expect(listed.items.map((endpoint) => endpoint.id)).toContain(made.id);
      expect(listed.items.find((endpoint) => endpoint.id === made.id)).not.toHaveProperty('secret');

      const rotated = await client.webhookEndpoints.rotateSecret(made.id, { graceSeconds: 60 });
      expect(rotated.secret).toMatch(/^whsec_/);
      expect(rotated.secret).not.toBe(secret);
      expect(Date.parse(rotated.previousSecretExpiresAt!)).toBeGreaterThan(Date.now() + 50_000);
      await expect(client.webhookEndpoints.rotateSecret(made.id, { graceSeconds: -1 })).rejects.toMatchObject(
        {
          status: 400,
          code: 'validation_failed',
        },
      );

      await expect(client.webhookEndpoints.delete(made.id, { ifMatch: changed.etag })).rejects.toMatchObject({
        status: 412,
        code: 'precondition_failed',
      });
      const current = await client.webhookEndpoints.get(made.id);
      await client.webhookEndpoints.delete(made.id, { ifMatch: current.etag });
      await expect(client.webhookEndpoints.get(made.id)).rejects.toMatchObject({
        status: 404,
        code: 'not_found',
      });
      await expect(client.webhookEndpoints.create({ url: 'ftp://127.0.0.1/hook' })).rejects.toMatchObject({
        status: 400,
        code: 'validation_failed',
        details: [{ field: 'url' }],
      });
    });

    it('a webhook endpoint create whose answer is lost is retried with its key: one endpoint, its secret answered', async () => {
      let lose = true;
      const keys: string[] = [];
      const losing = pkg.createPetStoreClient({
        ...options,
        fetch: async (input, init) => {
          const headers = input instanceof Request ? input.headers : new Headers(init?.headers);
          keys.push(headers.get('Idempotency-Key') ?? '');
          const response = await fetch(input, init);
          if (!lose) return response;
          lose = false;
          await response.arrayBuffer();
          throw new TypeError('fetch failed: the connection was reset');
        },
      });
      const url = 'http://127.0.0.1:9/lost-answer';
      const made = await losing.webhookEndpoints.create({ url, enabled: false });
      expect(keys).toHaveLength(2);
      expect(keys[1]).toBe(keys[0]);
      expect(made.secret).toMatch(/^whsec_/);
      const listed = await client.webhookEndpoints.list({ limit: 100 });
      expect(listed.items.filter((endpoint) => endpoint.url === url).map((endpoint) => endpoint.id)).toEqual([
        made.id,
      ]);
      await client.webhookEndpoints.delete(made.id);
    });

    it('a delivery of the service verifies with verifyWebhook, with both secrets while one rotates out; deliveries and resend', async () => {
      const receiver = await startReceiver();
      try {
        const made = await client.webhookEndpoints.create({ url: receiver.url, eventTypes: ['pet.created'] });
        const pet = await client.pets.create({ name: 'Delivered', categoryId: 42 });
        const first = await until(() => receiver.received[0]);
        const event = await pkg.verifyWebhook(first.body, first.headers, made.secret);
        expect(event).toMatchObject({ type: 'pet.created', data: { ...pet, version: 1 } });
        expect(first.headers['webhook-id']).toBe(event.id);
        await expect(
          pkg.verifyWebhook(first.body, new Headers(first.headers as Record<string, string>), made.secret),
        ).resolves.toEqual(event);

        const rotated = await client.webhookEndpoints.rotateSecret(made.id, { graceSeconds: 60 });
        await client.pets.create({ name: 'Delivered under two secrets', categoryId: 42 });
        const second = await until(() => receiver.received[1]);
        expect(String(second.headers['webhook-signature']).split(' ')).toHaveLength(2);
        for (const secret of [made.secret, rotated.secret])
          await expect(pkg.verifyWebhook(second.body, second.headers, secret)).resolves.toMatchObject({
            type: 'pet.created',
            data: { name: 'Delivered under two secrets' },
          });

        const deliveries = await until(async () => {
          const page = await client.webhookEndpoints.deliveries(made.id, { status: 'succeeded' });
          return page.items.length === 2 && page;
        });
        expect(deliveries.items.map((delivery) => delivery.eventId)).toEqual([
          JSON.parse(second.body).id,
          event.id,
        ]);
        expect(deliveries.items[1]).toMatchObject({ status: 'succeeded', attempts: [{ status: 200 }] });
        const resent = await client.webhookEndpoints.resend(made.id, deliveries.items[1].id);
        expect(resent).toMatchObject({ id: deliveries.items[1].id, status: 'pending' });
        const third = await until(() => receiver.received[2]);
        expect(third.headers['webhook-id']).toBe(event.id);
        await expect(pkg.verifyWebhook(third.body, third.headers, rotated.secret)).resolves.toEqual(event);
        await client.webhookEndpoints.delete(made.id);
      } finally {
        await receiver.close();
      }
    });
  });

  describe('verifyWebhook, against what the standardwebhooks package signs', () => {
    const secret = `whsec_${Buffer.from('a key of thirty-two bytes, no more').toString('base64')}`;
    const other = `whsec_${Buffer.from('another key of thirty-two bytes!!').toString('base64')}`;
    const body = JSON.stringify({
      id: 'evt_0000000000000007',
      type: 'pet.updated',
      timestamp: '2026-11-28T09:30:00.123Z',
      data: { id: 7, name: 'Rex', categoryId: 3, status: 'sold', version: 3, previousStatus: 'pending' },
    });
    const id = 'evt_0000000000000007';

    /** The headers of a delivery signed at `at` by each secret, space separated. */
    function signed(at: Date, ...secrets: string[]): Record<string, string> {
      return {
        'webhook-id': id,
        'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
        'webhook-signature': secrets.map((key) => new Webhook(key).sign(id, at, body)).join(' '),
      };
    }
    const refused = (reason: string) =>
      expect.objectContaining({ name: 'WebhookVerificationError', reason, message: expect.any(String) });
    const failure = (promise: Promise<unknown>) =>
      promise.then(
        () => undefined,
        (error: unknown) => {
          expect(error).toBeInstanceOf(pkg.WebhookVerificationError);
          return error;
        },
      );

    it('accepts a body signed by the official package, from a plain object or Headers, and answers its event', async () => {
      const now = new Date();
      const headers = signed(now, secret);
      await expect(pkg.verifyWebhook(body, headers, secret)).resolves.toEqual(JSON.parse(body));
      await expect(pkg.verifyWebhook(body, new Headers(headers), secret)).resolves.toEqual(JSON.parse(body));
      const capitalized = Object.fromEntries(
        Object.entries(headers).map(([name, value]) => [name.replace(/^w/, 'W'), [value]]),
      );
      await expect(pkg.verifyWebhook(body, capitalized, secret)).resolves.toEqual(JSON.parse(body));
      // What verifyWebhook accepts, the official package accepts too.
      expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    });

    it('accepts when the second of two space-separated signatures matches', async () => {
      const headers = signed(new Date(), other, secret);
      expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
      await expect(pkg.verifyWebhook(body, headers, secret)).resolves.toEqual(JSON.parse(body));
      await expect(pkg.verifyWebhook(body, headers, other)).resolves.toEqual(JSON.parse(body));
    });

    it('refuses a tampered body, a tampered timestamp and a wrong secret', async () => {
      const headers = signed(new Date(), secret);
      const tampered = body.replace('"Rex"', '"Max"');
      expect(await failure(pkg.verifyWebhook(tampered, headers, secret))).toEqual(
        refused('invalid_signature'),
      );
      const later = { ...headers, 'webhook-timestamp': String(Number(headers['webhook-timestamp']) + 1) };
      expect(await failure(pkg.verifyWebhook(body, later, secret))).toEqual(refused('invalid_signature'));
      const otherId = { ...headers, 'webhook-id': 'evt_0000000000000008' };
      expect(await failure(pkg.verifyWebhook(body, otherId, secret))).toEqual(refused('invalid_signature'));
      expect(await failure(pkg.verifyWebhook(body, headers, other))).toEqual(refused('invalid_signature'));
      const v2 = { ...headers, 'webhook-signature': headers['webhook-signature'].replace('v1,', 'v2,') };
      expect(await failure(pkg.verifyWebhook(body, v2, secret))).toEqual(refused('invalid_signature'));
    });

    it('refuses a timestamp more than the tolerance (5 minutes) old or ahead, unless told another now', async () => {
      const now = new Date();
      const old = new Date(now.getTime() - 301_000);
      expect(await failure(pkg.verifyWebhook(body, signed(old, secret), secret))).toEqual(
        refused('timestamp_too_old'),
      );
      const ahead = new Date(now.getTime() + 301_000);
      expect(await failure(pkg.verifyWebhook(body, signed(ahead, secret), secret))).toEqual(
        refused('timestamp_too_new'),
      );
      const almost = new Date(now.getTime() - 290_000);
      await expect(pkg.verifyWebhook(body, signed(almost, secret), secret)).resolves.toEqual(
        JSON.parse(body),
      );
      expect(
        await failure(pkg.verifyWebhook(body, signed(almost, secret), secret, { toleranceSeconds: 60 })),
      ).toEqual(refused('timestamp_too_old'));
      await expect(pkg.verifyWebhook(body, signed(old, secret), secret, { now: old })).resolves.toEqual(
        JSON.parse(body),
      );
    });

    it('refuses a delivery without its headers, with a timestamp that is not seconds, or under a secret that is not one', async () => {
      const headers = signed(new Date(), secret);
      for (const name of Object.keys(headers)) {
        const { [name]: _left, ...without } = headers;
        expect(await failure(pkg.verifyWebhook(body, without, secret))).toEqual(refused('missing_header'));
      }
      const iso = { ...headers, 'webhook-timestamp': new Date().toISOString() };
      expect(await failure(pkg.verifyWebhook(body, iso, secret))).toEqual(refused('invalid_timestamp'));
      expect(await failure(pkg.verifyWebhook(body, headers, 'whsec_'))).toEqual(refused('invalid_secret'));
      expect(await failure(pkg.verifyWebhook(body, headers, 'whsec_not base64!'))).toEqual(
        refused('invalid_secret'),
      );
      await expect(
        pkg.verifyWebhook(body, headers, secret, { toleranceSeconds: Number.NaN }),
      ).rejects.toThrow(RangeError);
    });
  });

  it('429: retries after Retry-After only within its time; past it, rate_limited with retryAfter, at once', async () => {
    const { app, baseUrl } = await listening({ RATE_LIMIT_ENABLED: 'true', RATE_LIMIT_PER_MINUTE: '2' });
    try {
      const client = pkg.createPetStoreClient({ baseUrl, apiKey: TEST_KEY, retry: { totalTimeoutMs: 5000 } });
      await client.pets.list();
      await client.pets.list();
      const started = Date.now();
      const limited = await client.pets.list().catch((error: unknown) => error);
      expect(limited).toMatchObject({ status: 429, code: 'rate_limited', retryAfter: expect.any(Number) });
      expect((limited as PetStoreClientModule.PetStoreError).retryAfter).toBeGreaterThan(5);
      expect(Date.now() - started).toBeLessThan(2000);
    } finally {
      await app.close();
    }
  });

  it('connection failures: retried until the service is up; past the attempts, PetStoreConnectionError', async () => {
    const port = await sparePort();
    const baseUrl = `http://127.0.0.1:${port}/v1`;
    const impatient = pkg.createPetStoreClient({
      baseUrl,
      apiKey: TEST_KEY,
      retry: { attempts: 2, baseDelayMs: 10 },
    });
    await expect(impatient.pets.list()).rejects.toBeInstanceOf(pkg.PetStoreConnectionError);

    const patient = pkg.createPetStoreClient({
      baseUrl,
      apiKey: TEST_KEY,
      retry: { attempts: 10, maxDelayMs: 300 },
    });
    const listing = patient.pets.list();
    await sleep(800);
    const app = await startApp();
    try {
      await app.listen(port, '127.0.0.1');
      await expect(listing).resolves.toEqual({ items: [] });
    } finally {
      await app.close();
    }
  });

  const bin = postgresBinaries();
  // It brings its own server, so it runs once, in the default pass (not again under TEST_DATABASE_URL).
  const describeWithPostgres = bin && !TEST_DATABASE_URL ? describe : describe.skip;

  describeWithPostgres('with the database going away (a PostgreSQL server of its own)', () => {
    let cluster: PostgresCluster;

    beforeAll(async () => {
      cluster = await startPostgresCluster(bin!);
    }, 60_000);

    afterAll(() => {
      cluster?.destroy();
    });

    async function named(name: string): Promise<number> {
      const db = new Client({ connectionString: cluster.url });
      await db.connect();
      try {
        return (await db.query('SELECT count(*)::int AS n FROM client.pets WHERE name = $1', [name])).rows[0]
          .n as number;
      } finally {
        await db.end();
      }
    }

    it('a create answered 503 while the database is down is retried until it is back, and stored once', async () => {
      const { app, baseUrl } = await listening({ DATABASE_URL: cluster.url, DATABASE_SCHEMA: 'client' });
      try {
        const { client, statuses } = recording({
          baseUrl,
          apiKey: TEST_KEY,
          retry: { totalTimeoutMs: 30_000 },
        });
        await cluster.stop();
        const creating = client.pets.create({ name: 'Through an outage', categoryId: 34 });
        const reading = client.pets.list({ limit: 1 });
        await sleep(2500);
        await cluster.start();
        const pet = await creating;
        expect(pet).toMatchObject({ name: 'Through an outage', categoryId: 34 });
        expect(Array.isArray((await reading).items)).toBe(true);
        expect(await named('Through an outage')).toBe(1);
        expect(statuses).toContain(503);
        expect(statuses.filter((status) => status === 201 || status === 200)).toHaveLength(2);
      } finally {
        await app.close();
      }
    }, 60_000);

    it('a create whose COMMIT answer is lost (503, outcome unknown) is retried with its key and stored once', async () => {
      const proxy = await startCuttingProxy(cluster.port);
      const { app, baseUrl } = await listening({
        DATABASE_URL: `postgres://postgres@127.0.0.1:${proxy.port}/postgres`,
        DATABASE_SCHEMA: 'client',
      });
      try {
        const { client, statuses } = recording({ baseUrl, apiKey: TEST_KEY });
        proxy.cutAfterNextCommit();
        const pet = await client.pets.create({ name: 'Commit answer lost', categoryId: 35 });
        expect(pet).toMatchObject({ name: 'Commit answer lost' });
        expect(await named('Commit answer lost')).toBe(1);
        expect(statuses).toEqual([503, 201]);
      } finally {
        await app.close();
        await proxy.close();
      }
    }, 60_000);
  });
});
