import { Logger } from '@nestjs/common';
import { createLocalJWKSet, errors, JSONWebKeySet, JWTPayload, jwtVerify, JWTVerifyGetKey } from 'jose';
import type { AuthConfig } from '../config/app-config';
import { isLoopbackHost } from '../config/app-config';
import type { Scopes } from './api-keys.service';

/** Asymmetric only: an HMAC "signed" with the issuer's public key, or `none`, never verifies. */
const ALGORITHMS = ['RS256', 'PS256', 'ES256', 'EdDSA'];
const LEEWAY_S = 60;
/** A token naming a key the set lacks fetches the set again, at most this often. */
const UNKNOWN_KEY_REFETCH_MS = 60_000;
/** Older than this, the set is fetched again in the background; on failure the old one stays. */
const KEYS_MAX_AGE_MS = 10 * 60_000;
const FETCH_TIMEOUT_MS = 5000;
const DOCUMENT_MAX_BYTES = 1 << 20;
/** Three base64url parts: a compact JWS. An API key never has a dot. */
const COMPACT_JWS = /^[\w-]+\.[\w-]+\.[\w-]*$/;

/** A `sub` or `client_id` as the audit log keeps it. */
const NAME = /^[^\u0000-\u001f\u007f]{1,255}$/;

export const looksLikeJwt = (token: string): boolean => COMPACT_JWS.test(token);

export interface TokenCaller {
  readonly subject: string;
  /** `client_id`, else `azp`: the application the token was issued to. */
  readonly clientId?: string;
  readonly scopes: Scopes;
}

/** `unavailable`: the token names a key the issuer could not be asked about. */
export type TokenVerdict = TokenCaller | 'invalid' | 'expired' | 'unavailable';

class IssuerUnreachable extends Error {}

/**
 * The identity provider's side of bearer authentication: its discovery document and signing keys,
 * and the RFC 9068 checks of an access token. jose does the JOSE work; this class decides when
 * to ask the issuer, so that known keys keep working while it is away.
 */
export class AccessTokens {
  private readonly logger = new Logger('AccessTokens');
  private keys!: ReturnType<typeof createLocalJWKSet>;
  private keysAt = 0;
  private fetchedAt = 0;
  private unknownKeyFetchAt = -Infinity;
  private lastFetchFailed = false;
  private fetching?: Promise<void>;

  private constructor(
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
    const discovery = await fetchJson(`${issuer}/.well-known/openid-configuration`).catch((error: Error) => {
      throw new Error(`OIDC_ISSUER: the discovery document could not be read: ${error.message}`);
    });
    const endpoint = (name: string) => {
      const value = discovery[name];
      if (typeof value !== 'string' || !isTrustedUrl(value))
        throw new Error(`OIDC_ISSUER: the discovery document's ${name} is not an https URL`);
      return value;
    };
    if (discovery.issuer !== issuer)
      throw new Error(
        `OIDC_ISSUER: the discovery document names another issuer (${String(discovery.issuer)})`,
      );
    const tokens = new AccessTokens(
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
      const { payload } = await jwtVerify(token, this.keyFor, {
        issuer: this.issuer,
        audience: this.audience,
        algorithms: ALGORITHMS,
        clockTolerance: LEEWAY_S,
        requiredClaims: ['exp', 'sub'],
      });
      return this.callerOf(payload);
    } catch (error) {
      if (error instanceof IssuerUnreachable) return 'unavailable';
      return error instanceof errors.JWTExpired ? 'expired' : 'invalid';
    }
  }

  private readonly keyFor: JWTVerifyGetKey = async (header, token) => {
    const now = Date.now();
    if (now - this.keysAt > KEYS_MAX_AGE_MS && now - this.fetchedAt >= UNKNOWN_KEY_REFETCH_MS)
      void this.refetch().catch(() => undefined);
    try {
      return await this.keys(header, token);
    } catch (error) {
      if (!(error instanceof errors.JWKSNoMatchingKey)) throw error;
      await this.refetchForUnknownKey();
      return this.keys(header, token);
    }
  };

  private async refetchForUnknownKey(): Promise<void> {
    if (Date.now() - this.unknownKeyFetchAt >= UNKNOWN_KEY_REFETCH_MS) {
      this.unknownKeyFetchAt = Date.now();
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
    this.fetchedAt = Date.now();
    this.lastFetchFailed = true;
    const set = await fetchJson(this.jwksUri);
    this.keys = createLocalJWKSet(set as unknown as JSONWebKeySet);
    this.keysAt = Date.now();
    this.lastFetchFailed = false;
  }

  private callerOf(payload: JWTPayload): TokenVerdict {
    if (typeof payload.iat === 'number' && payload.iat > Date.now() / 1000 + LEEWAY_S) return 'invalid';
    const subject = payload.sub!;
    const clientId = [payload.client_id, payload.azp].find(
      (value): value is string => typeof value === 'string',
    );
    if (!NAME.test(subject) || (clientId !== undefined && !NAME.test(clientId))) return 'invalid';
    const prefix = this.scopePrefix;
    // Entra ID puts an application's permissions in `roles`, a user's in `scp`.
    const claimed: unknown[] = [payload.scope, payload.scp, payload.roles].flatMap((claim) =>
      typeof claim === 'string' ? claim.split(' ') : Array.isArray(claim) ? (claim as unknown[]) : [],
    );
    const scopes = new Set(
      claimed
        .filter((scope): scope is string => typeof scope === 'string' && scope !== '')
        .map((scope) => (prefix && scope.startsWith(prefix) ? scope.slice(prefix.length) : scope)),
    );
    return { subject, clientId, scopes };
  }
}

const isTrustedUrl = (value: string) =>
  URL.canParse(value) &&
  (new URL(value).protocol === 'https:' ||
    (new URL(value).protocol === 'http:' && isLoopbackHost(new URL(value).hostname)));

async function fetchJson(url: string): Promise<Record<string, unknown>> {
  const response = await fetch(url, {
    headers: { accept: 'application/json' },
    redirect: 'error',
    signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
  }).catch((error: Error & { cause?: { code?: string } }) => {
    throw new Error(`${url}: ${error.cause?.code ?? error.message}`);
  });
  if (!response.ok) throw new Error(`${url} answered ${response.status}`);
  const text = await response.text();
  if (text.length > DOCUMENT_MAX_BYTES) throw new Error(`${url} answered more than 1 MiB`);
  const body: unknown = JSON.parse(text);
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new Error(`${url} answered no JSON object`);
  return body as Record<string, unknown>;
}
