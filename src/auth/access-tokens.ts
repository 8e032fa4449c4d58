import { Logger } from '@nestjs/common';
import type * as Jose from 'jose';
import { performance } from 'node:perf_hooks';
import { isCleanText } from '../common/validation/text.validators';
import { AuthConfig, isTrustedUrl } from '../config/app-config';
import { digest } from './api-key.store';
import type { Scopes } from './api-keys.service';

/** Asymmetric only: an HMAC "signed" with the issuer's public key, or `none`, never verifies. */
const ALGORITHMS = ['RS256', 'PS256', 'ES256', 'EdDSA'];
const LEEWAY_S = 60;
/** A token naming a key the set lacks fetches the set again, at most this often... */
const UNKNOWN_KEY_REFETCH_MS = 60_000;
/** ...or this often while the issuer cannot be reached: no flood, and a short 503. */
export const UNREACHABLE_REFETCH_MS = 5000;
/** Older than this, the set is fetched again in the background; on failure the old one stays. */
const KEYS_MAX_AGE_MS = 10 * 60_000;
const FETCH_TIMEOUT_MS = 5000;
const DOCUMENT_MAX_BYTES = 1 << 20;
const COMPACT_JWS = /^[\w-]+\.[\w-]+\.[\w-]*$/;
/**
 * RFC 9068 asks for `at+jwt`; Keycloak and Entra ID send `JWT`. An ID token is refused by what
 * only ID tokens carry (Keycloak's `typ` claim `ID`, `nonce`, `at_hash`, `c_hash`).
 */
const ACCESS_TOKEN_TYPES = new Set([undefined, 'JWT', 'at+jwt', 'application/at+jwt']);
const ID_TOKEN_CLAIMS = ['nonce', 'at_hash', 'c_hash'];

export const looksLikeJwt = (token: string): boolean => COMPACT_JWS.test(token);

export interface TokenCaller {
  /** The digest of the issuer and subject: rate limits and idempotency records count by it. */
  readonly owner: string;
  readonly subject: string;
  readonly clientId?: string;
  readonly scopes: Scopes;
}

/** Why a token is refused, for the log line (jose's messages name claims, never their values). */
export interface TokenRefusal {
  readonly expired: boolean;
  readonly reason: string;
}

/** `unavailable`: the token names a key the issuer could not be asked about. */
export type TokenVerdict = TokenCaller | TokenRefusal | 'unavailable';

const refused = (reason: string, expired = false): TokenRefusal => ({ expired, reason });

class IssuerUnreachable extends Error {}

/**
 * The identity provider's side of bearer authentication: its discovery document and signing keys,
 * and the RFC 9068 checks of an access token. jose does the JOSE work; this class decides when
 * to ask the issuer, so that known keys keep working while it is away.
 */
export class AccessTokens {
  private readonly logger = new Logger('AccessTokens');
  private keys!: ReturnType<typeof Jose.createLocalJWKSet>;
  private keysAt = -Infinity;
  private fetchedAt = -Infinity;
  private unknownKeyFetchAt = -Infinity;
  private lastFetchFailed = false;
  private fetching?: Promise<void>;

  private constructor(
    /** Loaded only where tokens are accepted: tens of ms of every start otherwise. */
    private readonly jose: typeof Jose,
    private readonly issuer: string,
    private readonly audience: string,
    private readonly scopePrefix: string,
    private readonly jwksUri: string,
    /** From discovery, for the OpenAPI document's client-credentials flow. */
    readonly tokenEndpoint: string,
  ) {}

  /** Reads discovery and the key set once: a wrong issuer fails the start, not the first request. */
  static async discover(config: AuthConfig): Promise<AccessTokens | null> {
    const { oidcIssuer: issuer, oidcAudience: audience, oidcScopePrefix: prefix } = config;
    if (issuer === null || audience === null) return null;
    const discoveryUrl = `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
    const discovery = await fetchJson(discoveryUrl).catch((error: Error) => {
      throw new Error(`OIDC_ISSUER: the discovery document could not be read: ${error.message}`);
    });
    if (discovery.issuer !== issuer)
      throw new Error(
        `OIDC_ISSUER: the discovery document names another issuer (${String(discovery.issuer)})`,
      );
    // Plain http only where the issuer itself is on loopback.
    const endpoint = (name: string) => {
      const value = discovery[name];
      if (
        typeof value !== 'string' ||
        !isTrustedUrl(value) ||
        new URL(value).protocol !== new URL(issuer).protocol
      )
        throw new Error(`OIDC_ISSUER: the discovery document's ${name} is not a URL of the issuer's scheme`);
      return value;
    };
    const tokens = new AccessTokens(
      await import('jose'),
      issuer,
      audience,
      prefix,
      endpoint('jwks_uri'),
      endpoint('token_endpoint'),
    );
    await tokens.fetchKeys().catch((error: Error) => {
      throw new Error(`OIDC_ISSUER: the signing keys could not be read: ${error.message}`);
    });
    return tokens;
  }

  async verify(token: string): Promise<TokenVerdict> {
    try {
      const { payload, protectedHeader } = await this.jose.jwtVerify(token, this.keyFor, {
        issuer: this.issuer,
        audience: this.audience,
        algorithms: ALGORITHMS,
        clockTolerance: LEEWAY_S,
        requiredClaims: ['exp'],
      });
      if (!ACCESS_TOKEN_TYPES.has(protectedHeader.typ)) return refused('"typ" is not an access token\'s');
      return this.callerOf(payload);
    } catch (error) {
      if (error instanceof IssuerUnreachable) return 'unavailable';
      // A `crit` name is the token's own text: bounded, and pino escapes it.
      const { errors } = this.jose;
      const reason = error instanceof errors.JOSEError ? error.message.slice(0, 200) : 'not a JWT';
      return refused(reason, error instanceof errors.JWTExpired);
    }
  }

  private readonly keyFor: Jose.JWTVerifyGetKey = async (header, token) => {
    const now = performance.now();
    if (now - this.keysAt > KEYS_MAX_AGE_MS && now - this.fetchedAt >= UNKNOWN_KEY_REFETCH_MS)
      void this.refetch().catch(() => undefined);
    try {
      return await this.keys(header, token);
    } catch (error) {
      if (!(error instanceof this.jose.errors.JWKSNoMatchingKey)) throw error;
      await this.refetchForUnknownKey();
      return this.keys(header, token);
    }
  };

  private async refetchForUnknownKey(): Promise<void> {
    const interval = this.lastFetchFailed ? UNREACHABLE_REFETCH_MS : UNKNOWN_KEY_REFETCH_MS;
    if (performance.now() - this.unknownKeyFetchAt >= interval) {
      this.unknownKeyFetchAt = performance.now();
      await this.refetch();
    } else await this.fetching?.catch(() => undefined);
    if (this.lastFetchFailed) throw new IssuerUnreachable();
  }

  /** One fetch at a time, whoever asks. */
  private refetch(): Promise<void> {
    return (this.fetching ??= this.fetchKeys()
      .catch((error: unknown) => {
        this.logger.warn(`The identity provider's keys could not be fetched: ${(error as Error).message}`);
        throw new IssuerUnreachable();
      })
      .finally(() => (this.fetching = undefined)));
  }

  private async fetchKeys(): Promise<void> {
    this.fetchedAt = performance.now();
    this.lastFetchFailed = true;
    this.keys = this.jose.createLocalJWKSet((await fetchJson(this.jwksUri)) as unknown as Jose.JSONWebKeySet);
    this.keysAt = performance.now();
    this.lastFetchFailed = false;
  }

  private callerOf(payload: Jose.JWTPayload): TokenVerdict {
    if (typeof payload.iat === 'number' && payload.iat > Date.now() / 1000 + LEEWAY_S)
      return refused('"iat" is in the future');
    if (payload.typ === 'ID' || ID_TOKEN_CLAIMS.some((claim) => claim in payload))
      return refused('an ID token');
    const { sub: subject } = payload;
    const clientId = [payload.client_id, payload.azp].find((value) => value !== undefined);
    if (!isCleanText(subject, 1, 255) || (clientId !== undefined && !isCleanText(clientId, 1, 255)))
      return refused('"sub" or "client_id" is not 1 to 255 characters of text');
    // A user's token grants what its client was granted (`scope`, `scp`); an application's own
    // token carries Entra ID's application permissions in `roles`.
    const claim = payload.scope ?? payload.scp ?? payload.roles;
    const named: unknown[] = typeof claim === 'string' ? claim.split(' ') : Array.isArray(claim) ? claim : [];
    const prefix = this.scopePrefix;
    const scopes = new Set(
      named
        .filter((scope): scope is string => typeof scope === 'string' && scope.startsWith(prefix))
        .map((scope) => scope.slice(prefix.length)),
    );
    return { owner: digest(`${this.issuer} ${subject}`).toString('hex'), subject, clientId, scopes };
  }
}

async function fetchJson(url: string): Promise<Record<string, unknown>> {
  const response = await fetch(url, {
    headers: { accept: 'application/json' },
    redirect: 'error',
    signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
  }).catch((error: Error & { cause?: { code?: string } }) => {
    throw new Error(`${url}: ${error.cause?.code ?? error.message}`);
  });
  if (!response.ok) throw new Error(`${url} answered ${response.status}`);
  if (Number(response.headers.get('content-length')) > DOCUMENT_MAX_BYTES)
    throw new Error(`${url} answered more than 1 MiB`);
  const text = await response.text();
  if (Buffer.byteLength(text) > DOCUMENT_MAX_BYTES) throw new Error(`${url} answered more than 1 MiB`);
  const body: unknown = JSON.parse(text);
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new Error(`${url} answered no JSON object`);
  return body as Record<string, unknown>;
}
