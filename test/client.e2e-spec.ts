import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { NestExpressApplication } from '@nestjs/platform-express';
import type * as PetStoreClientModule from '@petstore/client';
import type { PetStoreClient, PetStoreClientOptions } from '@petstore/client';
import { Client } from 'pg';
import { startApp, TEST_DATABASE_URL, TEST_KEY } from './support/app';
import { sparePort } from './support/ports';
import {
  postgresBinaries,
  PostgresCluster,
  startCuttingProxy,
  startPostgresCluster,
} from './support/servers';

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
    const names = 'PetStoreConnectionError,PetStoreError,createPetStoreClient';
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
    let options: PetStoreClientOptions;
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
