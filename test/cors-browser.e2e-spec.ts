import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { NestExpressApplication } from '@nestjs/platform-express';
import { Browser, Page } from 'playwright-core';
import { startApp, TEST_KEY } from './support/app';
import { describeInBrowser, launchChromium } from './support/browser';

const describeCors = describeInBrowser('the CORS browser test');

/** A web app's origin: a server of its own on another port, serving an empty page. */
async function pageServer(): Promise<{ server: Server; origin: string }> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><title>web app</title><p>web app</p>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

interface CreateOutcome {
  ok: boolean;
  status?: number;
  location?: string | null;
  rateLimit?: string | null;
  replayed?: string | null;
  requestId?: string | null;
  name?: string;
  error?: string;
}

/** Runs in the page: what a web app's script does to create an animal, and what it can read. */
function createFromPage(page: Page, api: string): Promise<CreateOutcome> {
  return page.evaluate(
    async ({ api, key }) => {
      try {
        const res = await fetch(`${api}/v1/pets`, {
          method: 'POST',
          headers: {
            Authorization: `Bearer ${key}`,
            'Content-Type': 'application/json',
            'Idempotency-Key': 'browser-create-1',
            'X-Request-Id': 'from-the-browser',
          },
          body: JSON.stringify({ name: 'Cross-origin Rex', categoryId: 7 }),
        });
        const body = (await res.json()) as { name: string };
        return {
          ok: true,
          status: res.status,
          location: res.headers.get('Location'),
          rateLimit: res.headers.get('RateLimit'),
          replayed: res.headers.get('Idempotent-Replayed'),
          requestId: res.headers.get('X-Request-Id'),
          name: body.name,
        };
      } catch (error) {
        return { ok: false, error: String(error) };
      }
    },
    { api, key: TEST_KEY },
  );
}

describeCors('CORS in a real browser (Chromium, e2e)', () => {
  jest.setTimeout(90000);

  let allowed: { server: Server; origin: string };
  let foreign: { server: Server; origin: string };
  let app: NestExpressApplication;
  let api: string;
  let browser: Browser;

  beforeAll(async () => {
    allowed = await pageServer();
    foreign = await pageServer();
    app = await startApp({
      CORS_ORIGINS: allowed.origin,
      RATE_LIMIT_ENABLED: 'true',
      RATE_LIMIT_PER_MINUTE: '1000',
    });
    await app.listen(0, '127.0.0.1');
    api = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await app?.close();
    allowed?.server.close();
    foreign?.server.close();
  });

  it('a page from an allowed origin creates an animal with an Idempotency-Key and reads Location and RateLimit', async () => {
    const page = await browser.newPage();
    try {
      await page.goto(`${allowed.origin}/`);

      const first = await createFromPage(page, api);
      expect(first).toEqual({
        ok: true,
        status: 201,
        location: expect.stringMatching(/^\/v1\/pets\/\d+$/),
        rateLimit: expect.stringMatching(/^"default";r=\d+;t=\d+$/),
        replayed: null,
        requestId: 'from-the-browser',
        name: 'Cross-origin Rex',
      });

      // The same key again is a replay, and the browser may read that too.
      const again = await createFromPage(page, api);
      expect(again).toEqual({
        ...first,
        rateLimit: expect.stringMatching(/^"default";r=\d+;t=\d+$/),
        replayed: 'true',
      });
    } finally {
      await page.close();
    }
  });

  it('a page from an origin not on the list is refused by the browser, and creates nothing', async () => {
    const page = await browser.newPage();
    try {
      await page.goto(`${foreign.origin}/`);
      const before = (await (
        await fetch(`${api}/v1/pets`, { headers: { Authorization: `Bearer ${TEST_KEY}` } })
      ).json()) as unknown[];

      const outcome = await createFromPage(page, api);

      expect(outcome).toEqual({ ok: false, error: expect.stringMatching(/^TypeError: Failed to fetch/) });
      const after = (await (
        await fetch(`${api}/v1/pets`, { headers: { Authorization: `Bearer ${TEST_KEY}` } })
      ).json()) as unknown[];
      expect(after).toHaveLength(before.length);
    } finally {
      await page.close();
    }
  });
});
