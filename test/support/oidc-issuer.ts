import { createHmac, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, exportSPKI, generateKeyPair, JWK, KeyLike, SignJWT } from 'jose';

export type SigningAlg = 'RS256' | 'PS256' | 'ES256' | 'EdDSA';

export interface IssuerKey {
  readonly kid: string;
  readonly alg: SigningAlg;
  readonly privateKey: KeyLike;
  readonly publicKey: KeyLike;
  /** As the JWKS publishes it: kid, alg and use included. */
  readonly jwk: JWK;
}

export interface TokenOptions {
  /** Default: the issuer's current signing key. */
  key?: IssuerKey;
  /** Protected header fields added or overriding ({ kid: 'other' }); one set to undefined is left out. */
  header?: Record<string, unknown>;
}

interface Client {
  secret: string;
  scopes: readonly string[];
}

const ALGS: readonly SigningAlg[] = ['RS256', 'PS256', 'ES256', 'EdDSA'];

const withoutUndefined = (fields: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));

const segment = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** RFC 6749 2.3.1: id and secret are form-encoded before Basic; a client that skips it still gets through. */
function basicCredentials(authorization: string): [string, string] | [] {
  const decoded = /^Basic\s+(\S+)$/i.exec(authorization)?.[1];
  const credentials = Buffer.from(decoded ?? '', 'base64').toString('utf8');
  const colon = credentials.indexOf(':');
  if (colon < 0) return [];
  const formDecoded = (text: string) => {
    try {
      return decodeURIComponent(text.replace(/\+/g, ' '));
    } catch {
      return text;
    }
  };
  return [formDecoded(credentials.slice(0, colon)), formDecoded(credentials.slice(colon + 1))];
}

/**
 * An OpenID Connect issuer on loopback, laid out as Keycloak lays out a realm: discovery, JWKS
 * and a client-credentials token endpoint, with keys the tests rotate, withdraw or misuse.
 */
export class TestIssuer {
  readonly url: string;
  readonly audience = 'petstore-api';
  readonly tokenEndpoint: string;
  readonly jwksUri: string;
  jwksFetches = 0;
  discoveryFetches = 0;
  private readonly keys = new Map<string, IssuerKey>();
  private readonly clients = new Map<string, Client>();
  private current!: IssuerKey;

  private constructor(
    private readonly server: Server,
    private readonly port: number,
    private readonly path: string,
  ) {
    this.url = `http://127.0.0.1:${port}${path}`;
    this.tokenEndpoint = `${this.url}/protocol/openid-connect/token`;
    this.jwksUri = `${this.url}/protocol/openid-connect/certs`;
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      this.handle(req, res).catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(500).end(String(error));
      });
    });
  }

  static async start(options: { path?: string; port?: number } = {}): Promise<TestIssuer> {
    const server = createServer();
    server.listen(options.port ?? 0, '127.0.0.1');
    await once(server, 'listening');
    const path = (options.path ?? '/realms/petstore').replace(/\/+$/, '');
    const issuer = new TestIssuer(server, (server.address() as AddressInfo).port, path);
    await issuer.addKey('RS256');
    return issuer;
  }

  get signingKey(): IssuerKey {
    return this.current;
  }

  async addKey(alg: SigningAlg = 'RS256', { sign = true } = {}): Promise<IssuerKey> {
    const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
    const kid = randomUUID();
    const jwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
    const key: IssuerKey = { kid, alg, privateKey, publicKey, jwk };
    this.keys.set(kid, key);
    if (sign) this.current = key;
    return key;
  }

  /** Withdrawn from the JWKS; if it is the signing key, it still signs (a token no published key verifies). */
  removeKey(kid: string): void {
    this.keys.delete(kid);
  }

  registerClient(clientId: string, secret: string, scopes: readonly string[]): void {
    this.clients.set(clientId, { secret, scopes: [...scopes] });
  }

  /**
   * A signed access token: iss, aud, sub, client_id, azp, iat, exp (+300 s), jti and scope
   * 'pets:read' by default; `claims` override or extend them, one set to undefined is removed.
   */
  async token(claims: Record<string, unknown> = {}, options: TokenOptions = {}): Promise<string> {
    const key = options.key ?? this.current;
    const header = withoutUndefined({ alg: key.alg, kid: key.kid, typ: 'at+jwt', ...options.header });
    return new SignJWT(this.claims(claims))
      .setProtectedHeader(header as { alg: string })
      .sign(key.privateKey);
  }

  /** alg "none": no signature at all, built by hand since no library should make one. */
  unsigned(claims: Record<string, unknown> = {}): string {
    return `${segment({ alg: 'none', typ: 'JWT', kid: this.current.kid })}.${segment(this.claims(claims))}.`;
  }

  /**
   * The algorithm-confusion attack: HS256 keyed with the signing key's public key as PEM text,
   * which a verifier that lets the token pick its algorithm would accept. jose refuses to make it.
   */
  async hmacWithPublicKey(claims: Record<string, unknown> = {}): Promise<string> {
    const pem = await exportSPKI(this.current.publicKey);
    const signed = `${segment({ alg: 'HS256', typ: 'at+jwt', kid: this.current.kid })}.${segment(this.claims(claims))}`;
    return `${signed}.${createHmac('sha256', pem).update(signed).digest('base64url')}`;
  }

  /** The issuer goes away: its port refuses connections, and those open are cut. */
  async stop(): Promise<void> {
    if (!this.server.listening) return;
    const closed = once(this.server, 'close');
    this.server.close();
    this.server.closeAllConnections();
    await closed;
  }

  /** Back on the same port, with the same keys and clients. */
  async restart(): Promise<void> {
    if (this.server.listening) return;
    this.server.listen(this.port, '127.0.0.1');
    await once(this.server, 'listening');
  }

  private claims(claims: Record<string, unknown>): Record<string, unknown> {
    const now = Math.floor(Date.now() / 1000);
    return withoutUndefined({
      iss: this.url,
      aud: this.audience,
      sub: 'service-account-reporting',
      client_id: 'reporting',
      azp: 'reporting',
      iat: now,
      exp: now + 300,
      jti: randomUUID(),
      scope: 'pets:read',
      ...claims,
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const route = new URL(req.url ?? '/', this.url).pathname;
    const discovery = `${this.path}/.well-known/openid-configuration`;
    const certs = new URL(this.jwksUri).pathname;
    const token = new URL(this.tokenEndpoint).pathname;
    if (![discovery, certs, token].includes(route)) return void res.writeHead(404).end();
    // Swagger UI calls the token endpoint from the API's origin, another than the issuer's.
    res.setHeader('Access-Control-Allow-Origin', req.headers.origin ?? '*');
    res.setHeader('Vary', 'Origin');
    const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
      res.writeHead(status, { 'Content-Type': 'application/json', ...headers }).end(JSON.stringify(body));
    if (req.method === 'OPTIONS') {
      res.writeHead(204, {
        'Access-Control-Allow-Methods': 'GET, POST',
        'Access-Control-Allow-Headers': 'Authorization, Content-Type, X-Requested-With, Accept',
        'Access-Control-Max-Age': '600',
      });
      return void res.end();
    }
    if (req.method === 'GET' && route === discovery) {
      this.discoveryFetches++;
      return void json(200, {
        issuer: this.url,
        jwks_uri: this.jwksUri,
        token_endpoint: this.tokenEndpoint,
        grant_types_supported: ['client_credentials'],
        token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
        id_token_signing_alg_values_supported: ALGS,
        response_types_supported: ['token'],
        subject_types_supported: ['public'],
      });
    }
    if (req.method === 'GET' && route === certs) {
      this.jwksFetches++;
      return void json(200, { keys: [...this.keys.values()].map((key) => key.jwk) });
    }
    if (req.method !== 'POST' || route !== token) return void res.writeHead(404).end();

    // The token endpoint (RFC 6749 4.4); errors as section 5.2 words them.
    const noStore = { 'Cache-Control': 'no-store', Pragma: 'no-cache' };
    const fail = (status: number, error: string, extra: Record<string, string> = {}) =>
      json(status, { error }, { ...noStore, ...extra });
    if (!(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded'))
      return void fail(400, 'invalid_request');
    const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
    const [clientId, secret] = req.headers.authorization
      ? basicCredentials(req.headers.authorization)
      : [form.get('client_id'), form.get('client_secret')];
    const client = clientId ? this.clients.get(clientId) : undefined;
    if (!clientId || !client || client.secret !== secret)
      return void fail(401, 'invalid_client', { 'WWW-Authenticate': `Basic realm="${this.path || '/'}"` });
    if (!form.get('grant_type')) return void fail(400, 'invalid_request');
    if (form.get('grant_type') !== 'client_credentials') return void fail(400, 'unsupported_grant_type');
    const requested = [...new Set((form.get('scope') ?? '').split(' ').filter(Boolean))];
    if (requested.some((scope) => !client.scopes.includes(scope))) return void fail(400, 'invalid_scope');
    const scope = (requested.length > 0 ? requested : client.scopes).join(' ');
    const accessToken = await this.token({
      sub: `service-account-${clientId}`,
      client_id: clientId,
      azp: clientId,
      scope,
    });
    json(200, { access_token: accessToken, token_type: 'Bearer', expires_in: 300, scope }, noStore);
  }
}
