import request from 'supertest';
import type { App } from 'supertest/types';
import { encodeCursor } from '../src/common/pagination/cursor';
import { AUTH, useApp, withApp } from './support/app';

interface Pet {
  id: number;
  name: string;
  status?: string;
}

/** The URL of rel="next" in a Link header (RFC 8288), if any. */
function nextLink(link: string | undefined): string | undefined {
  return link === undefined ? undefined : /^<([^>]+)>; rel="next"$/.exec(link)?.[1];
}

describe('Cursor pagination with Link rel="next" (e2e)', () => {
  const api = useApp();
  const statuses = ['available', 'pending', 'sold', undefined];

  beforeAll(async () => {
    for (let i = 0; i < 45; i++) {
      const status = statuses[i % 4];
      await request(api.http)
        .post('/v1/pets')
        .set(AUTH)
        .send({ name: `Paged ${i}`, categoryId: 1, ...(status ? { status } : {}) })
        .expect(201);
    }
  });

  /** Follows next links from `first` to the end; returns every page's ids. */
  async function walk(first: string, between?: () => Promise<unknown>): Promise<number[][]> {
    const pages: number[][] = [];
    for (let url: string | undefined = first; url;) {
      const res = await request(api.http).get(url).set(AUTH);
      expect(res.status).toBe(200);
      pages.push((res.body as Pet[]).map((pet) => pet.id));
      url = nextLink(res.headers.link);
      if (between) await between();
    }
    return pages;
  }

  it('walks the whole collection in id order, no duplicates, no gaps, the last page without a link', async () => {
    const pages = await walk('/v1/pets?limit=10');
    expect(pages.map((page) => page.length)).toEqual([10, 10, 10, 10, 5]);
    expect(pages.flat()).toEqual(Array.from({ length: 45 }, (_, i) => i + 1));
  });

  it('keeps limit and status in the next link and walks only the filtered animals', async () => {
    const first = await request(api.http).get('/v1/pets?status=sold&limit=4').set(AUTH);
    const next = nextLink(first.headers.link);
    expect(next).toMatch(/^\/v1\/pets\?limit=4&status=sold&cursor=[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    const ids = (await walk('/v1/pets?status=sold&limit=4')).flat();
    expect(ids).toEqual(Array.from({ length: 45 }, (_, i) => i + 1).filter((id) => (id - 1) % 4 === 2));
  });

  it('has no Link header when everything fits in one page', async () => {
    const res = await request(api.http).get('/v1/pets?limit=100').set(AUTH);
    expect(res.body).toHaveLength(45);
    expect(res.headers.link).toBeUndefined();
  });

  it('sees animals added while walking, once each, and misses none', async () => {
    const ids = await withApp({}, async (walker) => {
      const server = walker.getHttpServer() as App;
      const add = (name: string) => request(server).post('/v1/pets').set(AUTH).send({ name, categoryId: 2 });
      for (let i = 0; i < 12; i++) await add(`Before ${i}`);
      const seen: number[] = [];
      let added = 0;
      for (let url: string | undefined = '/v1/pets?limit=5'; url;) {
        const res = await request(server).get(url).set(AUTH);
        seen.push(...(res.body as Pet[]).map((pet) => pet.id));
        url = nextLink(res.headers.link);
        if (added < 6) {
          await Promise.all([add(`During ${added++}`), add(`During ${added++}`)]);
        }
      }
      return seen;
    });
    expect(ids).toEqual(Array.from({ length: 18 }, (_, i) => i + 1));
  });

  it.each([
    ['made up', 'abc.def'],
    [
      'with a flipped character',
      () => encodeCursor({ afterId: 10, filter: null }).replace(/^./, (c) => (c === 'A' ? 'B' : 'A')),
    ],
    ['not a cursor at all', 'hello'],
    ['far too long', `${'a'.repeat(300)}.b`],
  ])('a cursor %s is 400 validation_failed', async (_label, cursor) => {
    const value = typeof cursor === 'function' ? cursor() : cursor;
    const res = await request(api.http)
      .get(`/v1/pets?cursor=${encodeURIComponent(value)}`)
      .set(AUTH);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'validation_failed', status: 400 });
    expect(res.body.details[0].field).toBe('cursor');
  });

  it('a cursor of another status filter (a foreign cursor) is 400', async () => {
    const sold = encodeCursor({ afterId: 3, filter: 'sold' as const });
    const res = await request(api.http).get(`/v1/pets?status=pending&cursor=${sold}`).set(AUTH);
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual([
      { field: 'cursor', message: 'cursor belongs to a list with another status filter' },
    ]);
    const unfiltered = await request(api.http).get(`/v1/pets?cursor=${sold}`).set(AUTH);
    expect(unfiltered.status).toBe(400);
  });

  it('a cursor given twice is 400', async () => {
    const cursor = encodeCursor({ afterId: 3, filter: null });
    const res = await request(api.http).get(`/v1/pets?cursor=${cursor}&cursor=${cursor}`).set(AUTH);
    expect(res.status).toBe(400);
  });
});
