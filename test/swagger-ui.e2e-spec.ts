import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { NestExpressApplication } from '@nestjs/platform-express';
import { Browser, Page } from 'playwright-core';
import { startApp, TEST_KEY } from './support/app';
import { describeInBrowser, launchChromium } from './support/browser';
import { TestIssuer } from './support/oidc-issuer';
import { committedDocument, operationsOf } from './support/openapi';

const ARTIFACTS = join(__dirname, 'artifacts');
/**
 * A name that is not localhost, mapped to the loopback address inside the browser only: the
 * browser treats the page as any plain-http site, as it would a server reached by its name
 * (for localhost it relaxes rules such as upgrade-insecure-requests).
 */
const HOST = 'petstore.test';

const describeSwaggerUi = describeInBrowser('the Swagger UI browser test');

/** The id Swagger UI gives an operation's block (it writes a space in a tag as `_`). */
const blockId = (tag: string, operationId: string): string =>
  `operations-${tag.replace(/\s/g, '_')}-${operationId}`;

/** The pets module's blocks and the probes', whatever other modules the document has. */
const isPets = (id: string): boolean => /^operations-pets-/.test(id);

interface PageProblems {
  cspViolations: string[];
  failedRequests: string[];
  pageErrors: string[];
  foreignRequests: string[];
}

describeSwaggerUi('Swagger UI in a real browser (Chromium, e2e)', () => {
  jest.setTimeout(90000);

  let app: NestExpressApplication;
  let browser: Browser;
  let origin: string;

  beforeAll(async () => {
    app = await startApp();
    await app.listen(0, '127.0.0.1');
    const { port } = app.getHttpServer().address() as { port: number };
    origin = `http://${HOST}:${port}`;
    browser = await launchChromium([`--host-resolver-rules=MAP ${HOST} 127.0.0.1`]);
    mkdirSync(ARTIFACTS, { recursive: true });
  });

  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  /** Everything that would show the page is broken: CSP violations, failed loads, errors, calls elsewhere. */
  function watch(page: Page, at = origin): PageProblems {
    const problems: PageProblems = {
      cspViolations: [],
      failedRequests: [],
      pageErrors: [],
      foreignRequests: [],
    };
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) problems.cspViolations.push(message.text());
    });
    page.on('requestfailed', (request) =>
      problems.failedRequests.push(`${request.url()}: ${request.failure()?.errorText}`),
    );
    page.on('pageerror', (error) => problems.pageErrors.push(error.message));
    page.on('request', (request) => {
      if (!request.url().startsWith(`${at}/`)) problems.foreignRequests.push(request.url());
    });
    return problems;
  }

  /** Waits for the operations to render; if they never do, says what went wrong in the page. */
  async function rendered(page: Page, problems: PageProblems): Promise<void> {
    try {
      await page.locator('.opblock').first().waitFor({ timeout: 15000 });
    } catch {
      throw new Error(`Swagger UI did not render its operations: ${JSON.stringify(problems, null, 2)}`);
    }
  }

  /** Runs "Try it out" → Execute on listPets; the status Swagger UI shows, and the request it sent. */
  async function tryListPets(
    page: Page,
    at = origin,
  ): Promise<{ shown: string; authorization: string | undefined }> {
    const operation = page.locator('#operations-pets-listPets');
    if (!(await operation.locator('.try-out__btn').isVisible()))
      await operation.locator('.opblock-summary').click();
    await operation.locator('.try-out__btn').click();
    const sent = page.waitForRequest((request) => request.url().startsWith(`${at}/v1/pets`));
    await operation.locator('.execute').click();
    const request = await sent;
    const status = operation.locator('.live-responses-table tbody .response-col_status').first();
    await status.waitFor();
    return { shown: (await status.innerText()).trim(), authorization: request.headers().authorization };
  }

  it('shows every documented operation, the pets and health ones in order, getPet deprecated; authorizes, runs listPets (200) and keeps the key across a reload', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const problems = watch(page);

    const docs = await page.goto(`${origin}/docs`);
    expect(docs?.status()).toBe(200);
    await rendered(page, problems);

    const documented = operationsOf(await committedDocument()).map(({ operation }) => ({
      id: blockId(operation.tags?.[0] ?? 'default', operation.operationId ?? ''),
      deprecated: operation.deprecated === true,
    }));
    const shown = await page.locator('.opblock').evaluateAll((blocks) => blocks.map((block) => block.id));
    const deprecated = await page
      .locator('.opblock.opblock-deprecated')
      .evaluateAll((blocks) => blocks.map((block) => block.id));
    expect([...shown].sort()).toEqual(documented.map((op) => op.id).sort());
    expect([...deprecated].sort()).toEqual(
      documented
        .filter((op) => op.deprecated)
        .map((op) => op.id)
        .sort(),
    );
    expect(shown.filter(isPets)).toEqual([
      'operations-pets-listPets',
      'operations-pets-createPet',
      'operations-pets-getPet',
      'operations-pets-updatePet',
    ]);
    expect(deprecated.filter(isPets)).toEqual(['operations-pets-getPet']);

    await page.locator('.auth-wrapper .authorize').click();
    await page.locator('.auth-container input#auth-bearer-value').fill(TEST_KEY);
    await page.locator('.auth-btn-wrapper .modal-btn.authorize').click();
    await page.locator('.auth-btn-wrapper .btn-done').click();

    expect(await tryListPets(page)).toEqual({ shown: '200', authorization: `Bearer ${TEST_KEY}` });
    await page.screenshot({ path: join(ARTIFACTS, 'swagger-ui.png'), fullPage: true });

    await page.reload();
    await rendered(page, problems);
    expect(await tryListPets(page)).toEqual({ shown: '200', authorization: `Bearer ${TEST_KEY}` });
    await page.screenshot({ path: join(ARTIFACTS, 'swagger-ui-after-reload.png'), fullPage: true });

    expect(problems).toEqual({ cspViolations: [], failedRequests: [], pageErrors: [], foreignRequests: [] });
    await page.close();
  });

  it("authorizes with the identity provider's client credentials and runs listPets with its token", async () => {
    const issuer = await TestIssuer.start();
    const withTokens = await startApp({ OIDC_ISSUER: issuer.url, OIDC_AUDIENCE: issuer.audience });
    try {
      await withTokens.listen(0, '127.0.0.1');
      const at = `http://${HOST}:${(withTokens.getHttpServer().address() as { port: number }).port}`;
      const document = (await (await fetch(`${at.replace(HOST, '127.0.0.1')}/docs-json`)).json()) as {
        components: { securitySchemes: { oauth2: { flows: { clientCredentials: { scopes: object } } } } };
      };
      const scopes = Object.keys(document.components.securitySchemes.oauth2.flows.clientCredentials.scopes);
      issuer.registerClient('swagger-ui', 'swagger-ui-secret', scopes);
      const page = await browser.newPage();
      const problems = watch(page, at);
      await page.goto(`${at}/docs`);
      await rendered(page, problems);

      await page.locator('.auth-wrapper .authorize').click();
      const oauth2 = page.locator('.auth-container').filter({ has: page.locator('input[id^="client_id_"]') });
      await oauth2.locator('input[id^="client_id_"]').fill('swagger-ui');
      await oauth2.locator('input[id^="client_secret_"]').fill('swagger-ui-secret');
      await oauth2.locator('.scopes a[data-all]').click();
      const token = page.waitForResponse((response) => response.url() === issuer.tokenEndpoint);
      await oauth2.locator('.modal-btn.authorize').click();
      expect((await token).status()).toBe(200);
      await page.locator('.dialog-ux .close-modal').click();
      // Swagger UI keeps no authorization across reloads here: a client secret in localStorage would outlive the page.
      expect(await page.evaluate('JSON.stringify(localStorage)')).not.toContain('swagger-ui-secret');

      const { shown, authorization } = await tryListPets(page, at);
      expect([shown, authorization]).toEqual([
        '200',
        expect.stringMatching(/^Bearer [\w-]+\.[\w-]+\.[\w-]+$/),
      ]);
      await page.screenshot({ path: join(ARTIFACTS, 'swagger-ui-oauth2.png'), fullPage: true });
      expect(problems).toEqual({
        cspViolations: [],
        failedRequests: [],
        pageErrors: [],
        foreignRequests: [issuer.tokenEndpoint],
      });
      await page.close();
    } finally {
      await withTokens.close();
      await issuer.stop();
    }
  });

  it('without a key, "Try it out" shows the 401 the document describes', async () => {
    const page = await browser.newPage();
    const problems = watch(page);
    await page.goto(`${origin}/docs`);
    await rendered(page, problems);
    expect(await tryListPets(page)).toEqual({ shown: '401', authorization: undefined });
    await page.close();
  });
});
