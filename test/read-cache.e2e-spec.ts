import { join } from 'node:path';
import { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import type { App } from 'supertest/types';
import { AUTH, startApp, tempDir } from './support/app';

interface Pet {
  id: number;
  name: string;
  categoryId: number;
  status?: string;
}

const STATUSES = [undefined, 'available', 'pending', 'sold'] as const;

/**
 * The service keeps full pages and animals by id in memory, and groups concurrent creates into
 * one INSERT. Whatever it serves from memory must be what the database holds at that moment.
 */
describe('Read caches and grouped creates (e2e)', () => {
  let app: NestExpressApplication;
  let http: App;

  beforeEach(async () => {
    app = await startApp();
    http = app.getHttpServer();
  });

  afterEach(async () => {
    await app.close();
  });

  const create = async (body: object): Promise<Pet> => {
    const res = await request(http).post('/v1/pets').set(AUTH).send(body);
    expect(res.status).toBe(201);
    return res.body as Pet;
  };

  const list = async (query: string): Promise<Pet[]> => {
    const res = await request(http).get(`/v1/pets?${query}`).set(AUTH);
    expect(res.status).toBe(200);
    return res.body as Pet[];
  };

  it('every page, full or not, equals the oldest matching animals after each create', async () => {
    const created: Pet[] = [];
    for (let i = 0; i < 10; i++) {
      const status = STATUSES[i % STATUSES.length];
      created.push(await create({ name: `Pet ${i}`, categoryId: 1 + i, ...(status ? { status } : {}) }));

      for (const limit of [1, 2, 3, 5]) {
        for (const status of STATUSES) {
          const matching = created.filter((pet) => status === undefined || pet.status === status);
          const query = status ? `limit=${limit}&status=${status}` : `limit=${limit}`;
          expect({ query, pets: await list(query) }).toEqual({ query, pets: matching.slice(0, limit) });
        }
      }
    }
  });

  it('a page that was not full is read again and shows the animal created since', async () => {
    const first = await create({ name: 'First', categoryId: 1, status: 'sold' });
    expect(await list('status=sold&limit=2')).toEqual([first]);
    expect(await list('status=sold&limit=2')).toEqual([first]);

    const second = await create({ name: 'Second', categoryId: 1, status: 'sold' });
    expect(await list('status=sold&limit=2')).toEqual([first, second]);

    await create({ name: 'Third', categoryId: 1, status: 'sold' });
    expect(await list('status=sold&limit=2')).toEqual([first, second]);
  });

  it('an unknown id is 404 until an animal with it is created, then 200', async () => {
    const existing = await create({ name: 'Existing', categoryId: 1 });
    const nextId = existing.id + 1;

    const before = await request(http).get(`/v1/pets/${nextId}`).set(AUTH);
    expect(before.status).toBe(404);

    const created = await create({ name: 'Next', categoryId: 2 });
    expect(created.id).toBe(nextId);
    const after = await request(http).get(`/v1/pets/${nextId}`).set(AUTH);
    expect(after.status).toBe(200);
    expect(after.body).toEqual(created);
  });

  it('concurrent creates each get their own animal, id and Location, readable at once', async () => {
    const bodies = Array.from({ length: 64 }, (_, i) => ({
      name: `Concurrent ${i}`,
      categoryId: 100 + i,
      ...(STATUSES[i % 4] ? { status: STATUSES[i % 4] } : {}),
    }));

    const responses = await Promise.all(
      bodies.map((body) => request(http).post('/v1/pets').set(AUTH).send(body)),
    );

    const pets = responses.map((res, i) => {
      expect(res.status).toBe(201);
      expect(res.headers.location).toBe(`/v1/pets/${res.body.id}`);
      expect(res.body).toEqual({ id: res.body.id, ...bodies[i] });
      return res.body as Pet;
    });
    const ids = pets.map((pet) => pet.id).sort((a, b) => a - b);
    expect(ids).toEqual(Array.from({ length: 64 }, (_, i) => ids[0] + i));
    for (const pet of pets) {
      const res = await request(http).get(`/v1/pets/${pet.id}`).set(AUTH);
      expect(res.body).toEqual(pet);
    }
    expect(await list('limit=64')).toEqual([...pets].sort((a, b) => a.id - b.id));
  });
});

describe('Grouped creates on a real SQLite file (e2e)', () => {
  it('every animal acknowledged by a grouped create is in the database after a restart', async () => {
    const dir = tempDir();
    const env = { DATABASE_PATH: join(dir.path, 'petstore.sqlite') };
    try {
      const first = await startApp(env);
      const responses = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          request(first.getHttpServer() as App)
            .post('/v1/pets')
            .set(AUTH)
            .send({ name: `Durable ${i}`, categoryId: 1 }),
        ),
      );
      await first.close();
      expect(responses.map((res) => res.status)).toEqual(Array(50).fill(201));

      const second = await startApp(env);
      const server = second.getHttpServer() as App;
      const stored = await request(server).get('/v1/pets?limit=100').set(AUTH);
      await second.close();
      expect(stored.body).toEqual(responses.map((res) => res.body as Pet).sort((a, b) => a.id - b.id));
    } finally {
      dir.cleanup();
    }
  });
});
