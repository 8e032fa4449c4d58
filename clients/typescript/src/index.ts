import createClient from 'openapi-fetch';
import { PetStoreError } from './errors.js';
import type { components, paths } from './generated/schema.js';
import { RetryOptions, withRetries } from './retry.js';

export { PetStoreConnectionError, PetStoreError } from './errors.js';
export type { ErrorCode, ErrorDetail } from './errors.js';
export type { RetryOptions } from './retry.js';
export type { components, paths } from './generated/schema.js';

export type Pet = components['schemas']['Pet'];
export type NewPet = components['schemas']['NewPet'];
export type PetStatus = components['schemas']['PetStatus'];
export type ApiKey = components['schemas']['ApiKey'];
export type ApiKeyWithSecret = components['schemas']['ApiKeyWithSecret'];
export type NewApiKey = components['schemas']['NewApiKey'];
export type ApiKeyPatch = components['schemas']['ApiKeyPatch'];
export type AuditEvent = components['schemas']['AuditEvent'];
export type AuditQuery = NonNullable<paths['/audit-events']['get']['parameters']['query']>;

export interface PetStoreClientOptions {
  /** The server URL, version segment included: `https://api.petstore.example.com/v1`. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <apiKey>`. */
  apiKey: string;
  /** How reads and creates are retried; `{ attempts: 1 }` turns retries off. */
  retry?: RetryOptions;
  /** Another `fetch` (the platform's by default). */
  fetch?: typeof globalThis.fetch;
}

export interface ListOptions {
  status?: PetStatus;
  /** Page size, 1 to 100 (the service's default: 20). */
  limit?: number;
  /** Where the page starts: `nextCursor` of the page before. */
  cursor?: string;
}

export interface Page {
  items: Pet[];
  /** Present when more animals match: pass it as `cursor` for the next page. */
  nextCursor?: string;
}

export interface CreateOptions {
  /** Makes the create safe to retry; one is generated for each call when not given. */
  idempotencyKey?: string;
}

export interface PetsApi {
  list(options?: ListOptions): Promise<Page>;
  /** Every animal (with this status), page after page, following the `Link` header to the end. */
  listAll(options?: Omit<ListOptions, 'cursor'>): AsyncIterable<Pet>;
  /** Adds an animal exactly once, however many attempts it takes. */
  create(pet: NewPet, options?: CreateOptions): Promise<Pet>;
  /** Deprecated by the API (removed on 5 December 2030): prefer `list` with `status`. */
  get(id: number): Promise<Pet>;
}

/** Needs a key with `keys:manage`; a secret is in the answer of `create` and `rotate` only. */
export interface ApiKeysApi {
  list(options?: Omit<ListOptions, 'status'>): Promise<{ items: ApiKey[]; nextCursor?: string }>;
  /** Not retried: a lost answer would lose the secret (revoke that key and make another). */
  create(key: NewApiKey): Promise<ApiKeyWithSecret>;
  get(id: number): Promise<ApiKey>;
  update(id: number, patch: ApiKeyPatch): Promise<ApiKey>;
  /** Not retried, for the same reason as `create`. */
  rotate(id: number, options?: { graceSeconds?: number }): Promise<ApiKeyWithSecret>;
  revoke(id: number): Promise<void>;
}

/** Needs a key with `audit:read`. */
export interface AuditEventsApi {
  list(query?: AuditQuery): Promise<{ items: AuditEvent[]; nextCursor?: string }>;
}

export interface PetStoreClient {
  pets: PetsApi;
  apiKeys: ApiKeysApi;
  auditEvents: AuditEventsApi;
}

/** `cursor` of the `rel="next"` link of a `Link` header, if there is one. */
function nextCursor(link: string | null): string | undefined {
  const target = /<([^>]*)>\s*;\s*rel="?next"?/.exec(link ?? '')?.[1];
  return target === undefined
    ? undefined
    : (new URL(target, 'http://link.invalid').searchParams.get('cursor') ?? undefined);
}

/** The data of a successful answer; a PetStoreError for any other. */
function dataOf<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.response.ok && result.data !== undefined) return result.data;
  throw PetStoreError.from(result.response, result.error);
}

export function createPetStoreClient(options: PetStoreClientOptions): PetStoreClient {
  const client = createClient<paths>({
    baseUrl: options.baseUrl,
    headers: { Authorization: `Bearer ${options.apiKey}` },
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  const retry = options.retry;

  /** A page of a list and the cursor of the next, if there is one. */
  const pageOf = <T>(result: { data?: T[]; error?: unknown; response: Response }) => {
    const items = dataOf(result);
    const next = nextCursor(result.response.headers.get('Link'));
    return next === undefined ? { items } : { items, nextCursor: next };
  };

  const list = async ({ status, limit, cursor }: ListOptions = {}): Promise<Page> =>
    withRetries(retry, async (signal) =>
      pageOf(await client.GET('/pets', { params: { query: { status, limit, cursor } }, signal })),
    );

  const once = { ...retry, attempts: 1 };
  const keyPath = (id: number) => ({ params: { path: { keyId: id } } });

  return {
    auditEvents: {
      list: (query = {}) =>
        withRetries(retry, async (signal) =>
          pageOf(await client.GET('/audit-events', { params: { query }, signal })),
        ),
    },
    apiKeys: {
      list: ({ limit, cursor } = {}) =>
        withRetries(retry, async (signal) =>
          pageOf(await client.GET('/api-keys', { params: { query: { limit, cursor } }, signal })),
        ),
      create: (key) =>
        withRetries(once, async (signal) => dataOf(await client.POST('/api-keys', { body: key, signal }))),
      get: (id) =>
        withRetries(retry, async (signal) =>
          dataOf(await client.GET('/api-keys/{keyId}', { ...keyPath(id), signal })),
        ),
      update: (id, patch) =>
        withRetries(retry, async (signal) =>
          dataOf(
            await client.PATCH('/api-keys/{keyId}', {
              ...keyPath(id),
              body: patch,
              headers: { 'Content-Type': 'application/merge-patch+json' },
              signal,
            }),
          ),
        ),
      rotate: (id, body = {}) =>
        withRetries(once, async (signal) =>
          dataOf(await client.POST('/api-keys/{keyId}/rotate', { ...keyPath(id), body, signal })),
        ),
      revoke: (id) =>
        withRetries(retry, async (signal) => {
          const result = await client.DELETE('/api-keys/{keyId}', { ...keyPath(id), signal });
          if (!result.response.ok) throw PetStoreError.from(result.response, result.error);
        }),
    },
    pets: {
      list,
      async *listAll({ status, limit } = {}) {
        let cursor: string | undefined;
        do {
          const page = await list({ status, limit, cursor });
          yield* page.items;
          cursor = page.nextCursor;
        } while (cursor !== undefined);
      },
      create(pet, { idempotencyKey = globalThis.crypto.randomUUID() } = {}) {
        return withRetries(
          retry,
          async (signal) =>
            dataOf(
              await client.POST('/pets', {
                body: pet,
                params: { header: { 'Idempotency-Key': idempotencyKey } },
                signal,
              }),
            ),
          // The first attempt may still hold the key on the server: wait for it, as for a 503.
          (error) => error.code === 'idempotency_conflict',
        );
      },
      get: (id) =>
        withRetries(retry, async (signal) =>
          dataOf(await client.GET('/pets/{petId}', { params: { path: { petId: id } }, signal })),
        ),
    },
  };
}
