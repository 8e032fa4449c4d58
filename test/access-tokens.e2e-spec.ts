import { spawnSync } from 'node:child_process';
import { copyFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import type { App } from 'supertest/types';
import { createApp } from '../src/app/setup-app';
import { reportStart } from '../src/app/startup-report';
import { loadConfig } from '../src/config/app-config';
import { AUTH, postgresTestEnv, startApp, tempDir, TEST_KEY } from './support/app';
import { captureLogs } from './support/logs';
import { committedDocument } from './support/openapi';
import { TestIssuer } from './support/oidc-issuer';
import { describeOnPostgres } from './support/postgres';

const ROOT = join(__dirname, '..');
const PET = { name: 'Rex', categoryId: 7 };
const INVALID = 'Bearer realm="petstore", error="invalid_token"';
/** An `API_KEYS` entry shaped like a JWT: still a key. */
const DOTTED_KEY = 'abcdefgh.ijklmnop.qrstuvwx';

/** A fresh issuer and an app that trusts it, for the tests that count the issuer's fetches or stop it. */
async function trusting(env: Record<string, string> = {}, options = {}) {
  const issuer = await TestIssuer.start();
  const app = await startApp({ OIDC_ISSUER: issuer.url, OIDC_AUDIENCE: issuer.audience, ...env }, options);
  return { issuer, app, http: app.getHttpServer() as App };
}

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

describe('OAuth 2.0 access tokens from an identity provider (e2e)', () => {
  let issuer: TestIssuer;
  let app: NestExpressApplication;
  let http: App;
  const logs = captureLogs();

  beforeAll(async () => {
    ({ issuer, app, http } = await trusting(
      { LOG_LEVEL: 'info', API_KEYS: `${TEST_KEY},${DOTTED_KEY}` },
      { logDestination: logs.stream },
    ));
  });

  afterAll(async () => {
    await app?.close();
    await issuer?.stop();
  });

  it('reads with pets:read, and is refused a create with 403 insufficient_scope', async () => {
    const token = await issuer.token({ scope: 'openid pets:read' });
    await request(http).get('/v1/pets').set(bearer(token)).expect(200);
    const refused = await request(http).post('/v1/pets').set(bearer(token)).send(PET).expect(403);
    expect(refused.body).toEqual({
      code: 'insufficient_scope',
      message: 'The access token lacks the scope pets:write, which this operation needs.',
      status: 403,
    });
    expect(refused.headers['www-authenticate']).toContain('scope="pets:write"');
  });

  it('creates with pets:write; the audit event names its subject and client; the log line too, never the token', async () => {
    const token = await issuer.token({ scope: 'pets:write', sub: 'svc-inventory', client_id: 'inventory' });
    const created = await request(http).post('/v1/pets').set(bearer(token)).send(PET).expect(201);
    const audit = await request(http).get('/v1/audit-events?subject=svc-inventory').set(AUTH).expect(200);
    expect(audit.body).toEqual([
      expect.objectContaining({
        subject: 'svc-inventory',
        clientId: 'inventory',
        operation: 'createPet',
        resourceId: created.body.id,
      }),
    ]);
    expect(audit.body[0]).not.toHaveProperty('keyId');
    await request(http).get('/v1/audit-events?subject=%01').set(AUTH).expect(400);
    const line = logs.lines().find((entry) => entry.method === 'POST' && entry.status === 201);
    expect(line).toEqual(expect.objectContaining({ subject: 'svc-inventory', clientId: 'inventory' }));
    expect(logs.text()).not.toContain(token.split('.')[2]);
  });

  it('says on the log line, not in the answer, why a token was refused; without one, asks for a key or token', async () => {
    const token = await issuer.token({ aud: 'petstore' });
    const answer = await request(http).get('/v1/pets?why=aud').set(bearer(token)).expect(401);
    expect(answer.body.message).toBe('The access token is not valid.');
    const line = logs.lines().find((entry) => entry.url === '/v1/pets?why=aud');
    expect(line).toEqual(
      expect.objectContaining({ status: 401, tokenRefused: 'unexpected "aud" claim value' }),
    );
    const missing = await request(http).get('/v1/pets').expect(401);
    expect(missing.body.message).toBe(
      'An API key or access token is required: send Authorization: Bearer <key or token>.',
    );
  });

  it('reads scopes from an scp array, an scp string and roles (Entra ID), with azp as the client', async () => {
    for (const claims of [
      { scp: ['pets:write'] },
      { scp: 'pets:read pets:write' },
      { roles: ['pets:write'] },
    ]) {
      const token = await issuer.token({ scope: undefined, client_id: undefined, azp: 'portal', ...claims });
      await request(http).post('/v1/pets').set(bearer(token)).send(PET).expect(201);
    }
    const audit = await request(http).get('/v1/audit-events?resource=pets').set(AUTH).expect(200);
    expect(audit.body.filter((event: { clientId?: string }) => event.clientId === 'portal')).toHaveLength(3);
  });

  it("takes roles only from an application's token: a user's scp is what its client was granted", async () => {
    const token = await issuer.token({ scope: undefined, scp: 'pets:read', roles: ['pets:write'] });
    await request(http).post('/v1/pets').set(bearer(token)).send(PET).expect(403);
  });

  it('accepts the typ Keycloak and Entra ID send (JWT), and none', async () => {
    for (const typ of ['JWT', undefined, 'application/at+jwt']) {
      const token = await issuer.token({}, { header: { typ } });
      await request(http).get('/v1/pets').set(bearer(token)).expect(200);
    }
  });

  it.each([
    ['expired', async () => issuer.token({ exp: Math.floor(Date.now() / 1000) - 120 })],
    ['for another audience', async () => issuer.token({ aud: 'another-api' })],
    ['from another issuer', async () => issuer.token({ iss: 'https://evil.example.com' })],
    ['without a subject', async () => issuer.token({ sub: undefined })],
    ['with a subject that is not a string', async () => issuer.token({ sub: 42 })],
    ['with a subject of control characters', async () => issuer.token({ sub: 'a\u0000b' })],
    ['that is an ID token (nonce)', async () => issuer.token({ nonce: 'n-0S6_WzA2Mj' })],
    ["that is Keycloak's ID token (typ claim ID)", async () => issuer.token({ typ: 'ID' })],
    ['of another type (typ header)', async () => issuer.token({}, { header: { typ: 'dpop+jwt' } })],
    ['not yet valid', async () => issuer.token({ nbf: Math.floor(Date.now() / 1000) + 600 })],
    ['issued in the future', async () => issuer.token({ iat: Math.floor(Date.now() / 1000) + 600 })],
    [
      'signed by a key the issuer never published',
      async () => {
        const stray = await issuer.addKey('RS256', { sign: false });
        issuer.removeKey(stray.kid);
        return issuer.token({}, { key: stray });
      },
    ],
    ['with alg none', () => Promise.resolve(issuer.unsigned({ scope: 'pets:write' }))],
    [
      "HS256 keyed with the issuer's public key",
      async () => issuer.hmacWithPublicKey({ scope: 'pets:write' }),
    ],
    [
      'with a tampered payload',
      async () => {
        const [header, , signature] = (await issuer.token()).split('.');
        const payload = Buffer.from(JSON.stringify({ sub: 'admin', scope: 'pets:write' })).toString(
          'base64url',
        );
        return `${header}.${payload}.${signature}`;
      },
    ],
  ])('a token %s is 401 invalid_token', async (_what, make) => {
    const answer = await request(http)
      .post('/v1/pets')
      .set(bearer(await make()))
      .send(PET)
      .expect(401);
    expect(answer.body).toEqual({ code: 'unauthorized', message: expect.any(String), status: 401 });
    expect(answer.headers['www-authenticate']).toMatch(/^Bearer realm="petstore", error="invalid_token"/);
  });

  it('says an expired token expired', async () => {
    const token = await issuer.token({ exp: Math.floor(Date.now() / 1000) - 120 });
    const answer = await request(http).get('/v1/pets').set(bearer(token)).expect(401);
    expect(answer.body.message).toBe('The access token has expired.');
    expect(answer.headers['www-authenticate']).toBe(
      `${INVALID}, error_description="The access token expired"`,
    );
  });

  it('names the issuer in the start-up line', async () => {
    await app.listen(0, '127.0.0.1');
    const env = {
      NODE_ENV: 'production',
      API_KEYS: TEST_KEY,
      OIDC_ISSUER: issuer.url,
      OIDC_AUDIENCE: issuer.audience,
    };
    reportStart(app, loadConfig(env));
    const started = logs.lines().find((line) => String(line.msg).startsWith('Pet Store API listening'));
    expect(started).toEqual(expect.objectContaining({ keys: 'environment', accessTokens: issuer.url }));
  });

  it('still takes API keys, one shaped like a JWT too, and refuses a key as a token', async () => {
    await request(http).get('/v1/pets').set(AUTH).expect(200);
    await request(http).get('/v1/pets').set(bearer(DOTTED_KEY)).expect(200);
    const answer = await request(http).get('/v1/pets').set(bearer('not.a.key')).expect(401);
    expect(answer.headers['www-authenticate']).toBe(INVALID);
  });

  it('declares an oauth2 client-credentials scheme with every scope, and CSP lets Swagger UI reach the token endpoint', async () => {
    const document = (await request(http).get('/docs-json').expect(200)).body;
    const scheme = document.components.securitySchemes.oauth2;
    expect(scheme.flows.clientCredentials.tokenUrl).toBe(issuer.tokenEndpoint);
    expect(Object.keys(scheme.flows.clientCredentials.scopes)).toEqual(
      expect.arrayContaining(['pets:read', 'pets:write', 'keys:manage', 'audit:read']),
    );
    expect(document.paths['/pets'].post.security).toEqual([{ bearer: [] }, { oauth2: ['pets:write'] }]);
    expect(document.paths['/pets'].get.security).toEqual([{ bearer: [] }, { oauth2: ['pets:read'] }]);
    // Else it is the committed document, which `npm run lint:openapi` checks.
    const committed = await committedDocument();
    expect(document.components.securitySchemes.bearer.description).toMatch(/^An API key, or an access token/);
    document.components.securitySchemes.bearer = committed.components!.securitySchemes!.bearer;
    delete document.components.securitySchemes.oauth2;
    for (const item of Object.values<Record<string, { security?: object[] }>>(document.paths))
      for (const operation of Object.values(item))
        if ('oauth2' in (operation.security?.[1] ?? {})) delete operation.security;
    expect(document).toEqual(committed);
    const page = await request(http).get('/docs').expect(200);
    expect(page.headers['content-security-policy']).toContain(
      `connect-src 'self' ${new URL(issuer.url).origin}`,
    );
  });

  it("passes lint:openapi's rules (Spectral, OWASP) with the oauth2 scheme, as the committed document does", async () => {
    const folder = tempDir();
    try {
      const document = (await request(http).get('/docs-json').expect(200)).body as object;
      copyFileSync(join(ROOT, '.spectral.yaml'), join(folder.path, '.spectral.yaml'));
      symlinkSync(join(ROOT, 'node_modules'), join(folder.path, 'node_modules'));
      // The ruleset's overrides name openapi.yaml; JSON is YAML.
      writeFileSync(join(folder.path, 'openapi.yaml'), JSON.stringify(document));
      const spectral = join(ROOT, 'node_modules', '.bin', 'spectral');
      const lint = spawnSync(spectral, ['lint', 'openapi.yaml', '--fail-severity', 'hint'], {
        cwd: folder.path,
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect({ status: lint.status, output: lint.status === 0 ? '' : lint.stdout }).toEqual({
        status: 0,
        output: '',
      });
    } finally {
      folder.cleanup();
    }
  });

  it('counts rate limits per subject', async () => {
    const limited = await trusting({ RATE_LIMIT_ENABLED: 'true', RATE_LIMIT_PER_MINUTE: '3' });
    try {
      const remaining = async (sub: string) => {
        const token = await limited.issuer.token({ sub });
        const answer = await request(limited.http).get('/v1/pets').set(bearer(token));
        if (answer.status === 429) expect(answer.body.message).toMatch(/per token subject/);
        return answer.status === 429 ? 'limited' : /r=(\d+)/.exec(answer.headers.ratelimit)![1];
      };
      // A fresh token each time: the count is the subject's, not the token's.
      expect([
        await remaining('a'),
        await remaining('a'),
        await remaining('a'),
        await remaining('a'),
      ]).toEqual(['2', '1', '0', 'limited']);
      expect(await remaining('b')).toBe('2');
    } finally {
      await limited.app.close();
      await limited.issuer.stop();
    }
  });
});

describe('the identity provider’s keys (e2e)', () => {
  let issuer: TestIssuer;
  let app: NestExpressApplication;
  let http: App;

  beforeEach(async () => {
    ({ issuer, app, http } = await trusting());
  });

  afterEach(async () => {
    await app?.close();
    await issuer?.stop();
  });

  it('picks up a key the issuer adds on its first use', async () => {
    await issuer.addKey('ES256');
    await request(http)
      .get('/v1/pets')
      .set(bearer(await issuer.token()))
      .expect(200);
    await issuer.addKey('EdDSA');
    await issuer.addKey('PS256');
    // Within the minute after a fetch for an unknown key, another unknown key is not fetched for.
    await request(http)
      .get('/v1/pets')
      .set(bearer(await issuer.token()))
      .expect(401);
  });

  it('fetches the key set at most twice for 20 tokens naming unknown keys, at once and one after another', async () => {
    expect(issuer.jwksFetches).toBe(1);
    const tokens = await Promise.all(
      Array.from({ length: 40 }, (_, index) => issuer.token({}, { header: { kid: `unknown-${index}` } })),
    );
    const answers = await Promise.all(
      tokens.slice(0, 20).map((token) => request(http).get('/v1/pets').set(bearer(token))),
    );
    for (const token of tokens.slice(20))
      answers.push(await request(http).get('/v1/pets').set(bearer(token)));
    expect(answers.map((answer) => answer.status)).toEqual(Array(40).fill(401));
    expect(issuer.jwksFetches).toBe(2);
  });

  it('keeps known keys working while the issuer is away; an unknown key is 503, never accepted', async () => {
    const known = await issuer.token({ scope: 'pets:write' });
    const unknown = await issuer.token({}, { header: { kid: 'rotated-in-meanwhile' } });
    await issuer.stop();
    await request(http).post('/v1/pets').set(bearer(known)).send(PET).expect(201);
    const answer = await request(http).get('/v1/pets').set(bearer(unknown)).expect(503);
    expect(answer.body).toEqual(expect.objectContaining({ code: 'service_unavailable', status: 503 }));
    expect(answer.headers['retry-after']).toBe('5');
  });

  it('asks again 5 s after the issuer could not be reached, and takes its new key once it is back', async () => {
    await issuer.stop();
    const unknown = await issuer.token({}, { header: { kid: 'not-yet' } });
    await request(http).get('/v1/pets').set(bearer(unknown)).expect(503);
    await issuer.addKey('ES256');
    await issuer.restart();
    const fresh = await issuer.token();
    await request(http).get('/v1/pets').set(bearer(fresh)).expect(503);
    await new Promise((resolve) => setTimeout(resolve, 5100));
    await request(http).get('/v1/pets').set(bearer(fresh)).expect(200);
  });

  it('strips OIDC_SCOPE_PREFIX from the scopes', async () => {
    const prefixed = await startApp({
      OIDC_ISSUER: issuer.url,
      OIDC_AUDIENCE: issuer.audience,
      OIDC_SCOPE_PREFIX: 'api://petstore/',
    });
    try {
      const http = prefixed.getHttpServer() as App;
      const token = await issuer.token({ scope: 'api://petstore/pets:write' });
      await request(http).post('/v1/pets').set(bearer(token)).send(PET).expect(201);
      // Without the prefix, a scope is another API's of the same provider.
      const unprefixed = await issuer.token({ scope: 'pets:write' });
      await request(http).post('/v1/pets').set(bearer(unprefixed)).send(PET).expect(403);
      const document = (await request(http).get('/docs-json').expect(200)).body;
      expect(document.paths['/pets'].post.security).toEqual([
        { bearer: [] },
        { oauth2: ['api://petstore/pets:write'] },
      ]);
    } finally {
      await prefixed.close();
    }
  });
});

describe('starting with OIDC_ISSUER (e2e)', () => {
  const start = (issuer: string) =>
    createApp(
      loadConfig({ DATABASE_PATH: ':memory:', LOG_LEVEL: 'silent', OIDC_ISSUER: issuer, OIDC_AUDIENCE: 'x' }),
      {
        logger: false,
      },
    );

  it('fails, naming the variable, when the issuer cannot be reached or names another issuer', async () => {
    const issuer = await TestIssuer.start();
    const url = issuer.url;
    await expect(start(`${url}/other`)).rejects.toThrow(
      /^OIDC_ISSUER: the discovery document could not be read/,
    );
    // Compared exactly: a trailing slash is another issuer.
    await expect(start(`${url}/`)).rejects.toThrow(
      `OIDC_ISSUER: the discovery document names another issuer (${url})`,
    );
    await issuer.stop();
    await expect(start(url)).rejects.toThrow(
      /^OIDC_ISSUER: the discovery document could not be read: http:\/\/127\.0\.0\.1:\d+\/realms\/petstore\/.well-known\/openid-configuration: [A-Z_]+$/,
    );
  });

  it('refuses plain http off loopback, and an audience without an issuer', () => {
    expect(() => loadConfig({ OIDC_ISSUER: 'http://idp.example.com', OIDC_AUDIENCE: 'a' })).toThrow(
      /OIDC_ISSUER/,
    );
    expect(() => loadConfig({ OIDC_AUDIENCE: 'a' })).toThrow(/OIDC_AUDIENCE is set but OIDC_ISSUER is not/);
    expect(() => loadConfig({ OIDC_ISSUER: 'https://idp.example.com' })).toThrow(/OIDC_AUDIENCE must be set/);
    expect(() => loadConfig({ OIDC_SCOPE_PREFIX: 'api://x/' })).toThrow(
      /OIDC_SCOPE_PREFIX is set but OIDC_ISSUER/,
    );
    expect(() => loadConfig({ OIDC_ISSUER: 'https://u:p@idp.example.com', OIDC_AUDIENCE: 'a' })).toThrow(
      /OIDC_ISSUER/,
    );
  });

  it('without it, a JWT is looked up as an API key', async () => {
    const issuer = await TestIssuer.start();
    const app = await startApp();
    try {
      const answer = await request(app.getHttpServer())
        .get('/v1/pets')
        .set(bearer(await issuer.token()));
      expect([answer.status, answer.body.message]).toEqual([401, 'The API key is not valid.']);
    } finally {
      await app.close();
      await issuer.stop();
    }
  });
});

describeOnPostgres('access tokens on PostgreSQL')('access tokens on PostgreSQL, two instances (e2e)', () => {
  it('a token creates on one instance; the other reads it, and its audit names the subject', async () => {
    const issuer = await TestIssuer.start();
    const env = { ...postgresTestEnv(), OIDC_ISSUER: issuer.url, OIDC_AUDIENCE: issuer.audience };
    const [a, b] = [await startApp(env), await startApp(env)];
    try {
      const writer = await issuer.token({ scope: 'pets:write pets:read', sub: 'svc-sync' });
      const created = await request(a.getHttpServer())
        .post('/v1/pets')
        .set(bearer(writer))
        .send(PET)
        .expect(201);
      const reader = await issuer.token({ scope: 'pets:read audit:read', sub: 'svc-report' });
      await request(b.getHttpServer()).get(`/v1/pets/${created.body.id}`).set(bearer(reader)).expect(200);
      const audit = await request(b.getHttpServer())
        .get('/v1/audit-events?subject=svc-sync')
        .set(bearer(reader));
      expect(audit.status).toBe(200);
      expect(audit.body).toEqual([
        expect.objectContaining({ subject: 'svc-sync', resourceId: created.body.id }),
      ]);
      await request(b.getHttpServer()).post('/v1/pets').set(bearer(reader)).send(PET).expect(403);
    } finally {
      await a.close();
      await b.close();
      await issuer.stop();
    }
  });
});
