import createClient from 'openapi-fetch';
import { PetStoreError } from './errors.js';
import type { components, paths } from './generated/schema.js';
import { NotRetried, RetryOptions, withRetries } from './retry.js';
import type { Event } from './webhooks.js';

export { PetStoreConnectionError, PetStoreError } from './errors.js';
export type { ErrorCode, ErrorDetail } from './errors.js';
export type { RetryOptions } from './retry.js';
export type { components, paths } from './generated/schema.js';
export { verifyWebhook, WebhookVerificationError } from './webhooks.js';
export type {
  Event,
  EventData,
  VerifyWebhookOptions,
  WebhookHeaders,
  WebhookVerificationReason,
} from './webhooks.js';

export type Pet = components['schemas']['Pet'];
export type NewPet = components['schemas']['NewPet'];
export type PetStatus = components['schemas']['PetStatus'];
export type ApiKey = components['schemas']['ApiKey'];
export type ApiKeyWithSecret = components['schemas']['ApiKeyWithSecret'];
export type NewApiKey = components['schemas']['NewApiKey'];
export type ApiKeyPatch = components['schemas']['ApiKeyPatch'];
export type AuditEvent = components['schemas']['AuditEvent'];
export type AuditQuery = NonNullable<paths['/audit-events']['get']['parameters']['query']>;
/** `type` (`pet.updated`, `pet.*`), `after` (an event id), `limit`, `cursor`. */
export type EventQuery = NonNullable<paths['/events']['get']['parameters']['query']>;
export type WebhookEndpoint = components['schemas']['WebhookEndpoint'];
export type WebhookEndpointWithSecret = components['schemas']['WebhookEndpointWithSecret'];
export type NewWebhookEndpoint = components['schemas']['NewWebhookEndpoint'];
export type WebhookEndpointPatch = components['schemas']['WebhookEndpointPatch'];
export type WebhookDelivery = components['schemas']['WebhookDelivery'];
export type WebhookAttempt = components['schemas']['WebhookAttempt'];
export type WebhookDeliveryQuery = NonNullable<
  paths['/webhook-endpoints/{endpointId}/deliveries']['get']['parameters']['query']
>;

/** A resource as read, with the answer's `ETag`: pass `etag` as `ifMatch` to change that version. */
export type WithEtag<T> = T & { etag: string };

interface CommonOptions {
  /** The server URL, version segment included: `https://api.petstore.example.com/v1`. */
  baseUrl: string;
  /** How reads and creates are retried; `{ attempts: 1 }` turns retries off. */
  retry?: RetryOptions;
  /** Another `fetch` (the platform's by default). */
  fetch?: typeof globalThis.fetch;
}

/** An API key or an access token provider: exactly one of the two. */
export type PetStoreClientOptions = CommonOptions &
  (
    | {
        /** Sent as `Authorization: Bearer <apiKey>`. */
        apiKey: string;
        token?: never;
      }
    | {
        /**
         * Answers an OAuth 2.0 access token of the identity provider, sent as `Authorization:
         * Bearer <token>`. Called before every request and every retry of one: cache the token in
         * it. What it throws, the call rejects with, unretried.
         */
        token: () => string | Promise<string>;
        apiKey?: never;
      }
  );

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

/** Needs a key with `events:read`. Oldest first; remember the last id you handled and list `after` it. */
export interface EventsApi {
  list(query?: EventQuery): Promise<{ items: Event[]; nextCursor?: string }>;
  /** Every event (of this type, after this one), page after page, following the `Link` header to the end. */
  listAll(query?: Omit<EventQuery, 'cursor'>): AsyncIterable<Event>;
}

export interface ConditionalOptions {
  /** The `etag` of the version the change is based on (412 `precondition_failed` if it changed since), or `*`: any. */
  ifMatch: string;
}

/** Needs a key with `webhooks:manage`; a secret is in the answer of `create` and `rotateSecret` only. */
export interface WebhookEndpointsApi {
  list(options?: Omit<ListOptions, 'status'>): Promise<{ items: WebhookEndpoint[]; nextCursor?: string }>;
  /**
   * Adds an endpoint exactly once, however many attempts it takes: like `pets.create`, with one
   * `Idempotency-Key` for all of them; a repeat is answered the stored answer, secret included.
   */
  create(endpoint: NewWebhookEndpoint, options?: CreateOptions): Promise<WebhookEndpointWithSecret>;
  /** The endpoint and its `etag`, for `update` and `delete`. */
  get(id: number): Promise<WithEtag<WebhookEndpoint>>;
  /**
   * A JSON merge patch (`description: null` removes it); the API requires `ifMatch`. Retried: an
   * attempt whose answer was lost but which was applied makes the next one 412 `precondition_failed`
   * (unless `ifMatch` is `*`): get the endpoint to see.
   */
  update(
    id: number,
    patch: WebhookEndpointPatch,
    options: ConditionalOptions,
  ): Promise<WithEtag<WebhookEndpoint>>;
  /** With `ifMatch`, only that version. Retried: after a lost answer, a retry may find it gone (404). */
  delete(id: number, options?: Partial<ConditionalOptions>): Promise<void>;
  /**
   * A new signing secret; for `graceSeconds` (default a day, at most 7 days) deliveries carry a
   * signature by the old one too. Not retried: a lost answer would lose the secret (rotate again).
   */
  rotateSecret(id: number, options?: { graceSeconds?: number }): Promise<WebhookEndpointWithSecret>;
  /** A page of the endpoint's deliveries, newest first, each with its last attempts. */
  deliveries(
    id: number,
    query?: WebhookDeliveryQuery,
  ): Promise<{ items: WebhookDelivery[]; nextCursor?: string }>;
  /** Tries a finished delivery again; a pending one is 409 `delivery_pending`. */
  resend(id: number, deliveryId: number): Promise<WebhookDelivery>;
}

export interface PetStoreClient {
  pets: PetsApi;
  apiKeys: ApiKeysApi;
  auditEvents: AuditEventsApi;
  events: EventsApi;
  webhookEndpoints: WebhookEndpointsApi;
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

/** The data of a successful answer and its `ETag`. */
function taggedOf<T>(result: { data?: T; error?: unknown; response: Response }): WithEtag<T> {
  const data = dataOf(result);
  const etag = result.response.headers.get('ETag');
  if (etag === null)
    throw PetStoreError.from(result.response, { code: 'internal_error', message: 'The answer has no ETag.' });
  return { ...data, etag };
}

/** Nothing but success: a PetStoreError for an error answer. */
function okOf(result: { error?: unknown; response: Response }): void {
  if (!result.response.ok) throw PetStoreError.from(result.response, result.error);
}

/** Each page of `list` in turn, to the last. */
async function* allOf<T, Q extends { cursor?: string }>(
  list: (query: Q) => Promise<{ items: T[]; nextCursor?: string }>,
  query: Omit<Q, 'cursor'>,
): AsyncGenerator<T> {
  let cursor: string | undefined;
  do {
    const page = await list({ ...query, cursor } as Q);
    yield* page.items;
    cursor = page.nextCursor;
  } while (cursor !== undefined);
}

/** RFC 7235's token68: all that may follow `Bearer ` in the header. */
const TOKEN68 = /^[A-Za-z0-9\-._~+/]+=*$/;

/** The `Authorization` value for what a token provider answered; a TypeError if it cannot be one. */
function bearer(token: unknown): string {
  // The messages never hold the value: it is a credential.
  if (typeof token !== 'string')
    throw new TypeError(
      `The token provider answered ${token === null ? 'null' : typeof token}, not a string.`,
    );
  if (token === '') throw new TypeError('The token provider answered an empty string.');
  if (!TOKEN68.test(token))
    throw new TypeError(
      'The token provider answered a string that is not a token68 (RFC 7235): letters, digits, -._~+/ and trailing =.',
    );
  return `Bearer ${token}`;
}

export function createPetStoreClient(options: PetStoreClientOptions): PetStoreClient {
  // The types refuse both and neither; JavaScript callers learn it here, not from a 401.
  const { apiKey, token } = options as { apiKey?: unknown; token?: unknown };
  if (apiKey !== undefined && token !== undefined)
    throw new TypeError('createPetStoreClient takes apiKey or token, not both.');
  if (apiKey === undefined && token === undefined)
    throw new TypeError('createPetStoreClient needs apiKey or token.');
  if (token !== undefined && typeof token !== 'function')
    throw new TypeError('token must be a function that answers an access token.');

  const client = createClient<paths>({
    baseUrl: options.baseUrl,
    ...(options.apiKey === undefined ? {} : { headers: { Authorization: `Bearer ${options.apiKey}` } }),
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  const provider = options.token;
  if (provider)
    client.use({
      // Asked for each request, each attempt of a retried one too: a token refreshed meanwhile is sent.
      async onRequest({ request }) {
        try {
          request.headers.set('Authorization', bearer(await provider()));
        } catch (error) {
          // Nothing was sent, and another attempt would only ask the provider again: not retried.
          throw new NotRetried(error);
        }
      },
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
  const endpointPath = (id: number) => ({ path: { endpointId: id } });

  /** An idempotent create: one key for every attempt, waiting out an attempt still in flight. */
  const createOnce = <T>(idempotencyKey: string, post: (key: string, signal: AbortSignal) => Promise<T>) =>
    withRetries(
      retry,
      (signal) => post(idempotencyKey, signal),
      // The first attempt may still hold the key on the server: wait for it, as for a 503.
      (error) => error.code === 'idempotency_conflict',
    );

  const listEvents = (query: EventQuery = {}) =>
    withRetries(retry, async (signal) => pageOf(await client.GET('/events', { params: { query }, signal })));

  return {
    events: {
      list: listEvents,
      listAll: (query = {}) => allOf(listEvents, query),
    },
    webhookEndpoints: {
      list: ({ limit, cursor } = {}) =>
        withRetries(retry, async (signal) =>
          pageOf(await client.GET('/webhook-endpoints', { params: { query: { limit, cursor } }, signal })),
        ),
      create: (endpoint, { idempotencyKey = globalThis.crypto.randomUUID() } = {}) =>
        createOnce(idempotencyKey, async (key, signal) =>
          dataOf(
            await client.POST('/webhook-endpoints', {
              body: endpoint,
              params: { header: { 'Idempotency-Key': key } },
              signal,
            }),
          ),
        ),
      get: (id) =>
        withRetries(retry, async (signal) =>
          taggedOf(await client.GET('/webhook-endpoints/{endpointId}', { params: endpointPath(id), signal })),
        ),
      update: (id, patch, { ifMatch }) =>
        withRetries(retry, async (signal) =>
          taggedOf(
            await client.PATCH('/webhook-endpoints/{endpointId}', {
              params: { ...endpointPath(id), header: { 'If-Match': ifMatch } },
              body: patch,
              headers: { 'Content-Type': 'application/merge-patch+json' },
              signal,
            }),
          ),
        ),
      delete: (id, { ifMatch } = {}) =>
        withRetries(retry, async (signal) =>
          okOf(
            await client.DELETE('/webhook-endpoints/{endpointId}', {
              params: {
                ...endpointPath(id),
                ...(ifMatch === undefined ? {} : { header: { 'If-Match': ifMatch } }),
              },
              signal,
            }),
          ),
        ),
      rotateSecret: (id, body = {}) =>
        withRetries(once, async (signal) =>
          dataOf(
            await client.POST('/webhook-endpoints/{endpointId}/rotate-secret', {
              params: endpointPath(id),
              body,
              signal,
            }),
          ),
        ),
      deliveries: (id, query = {}) =>
        withRetries(retry, async (signal) =>
          pageOf(
            await client.GET('/webhook-endpoints/{endpointId}/deliveries', {
              params: { ...endpointPath(id), query },
              signal,
            }),
          ),
        ),
      resend: (id, deliveryId) =>
        withRetries(retry, async (signal) =>
          dataOf(
            await client.POST('/webhook-endpoints/{endpointId}/deliveries/{deliveryId}/resend', {
              params: { path: { endpointId: id, deliveryId } },
              signal,
            }),
          ),
        ),
    },
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
        withRetries(retry, async (signal) =>
          okOf(await client.DELETE('/api-keys/{keyId}', { ...keyPath(id), signal })),
        ),
    },
    pets: {
      list,
      listAll: ({ status, limit } = {}) => allOf(list, { status, limit }),
      create: (pet, { idempotencyKey = globalThis.crypto.randomUUID() } = {}) =>
        createOnce(idempotencyKey, async (key, signal) =>
          dataOf(
            await client.POST('/pets', { body: pet, params: { header: { 'Idempotency-Key': key } }, signal }),
          ),
        ),
      get: (id) =>
        withRetries(retry, async (signal) =>
          dataOf(await client.GET('/pets/{petId}', { params: { path: { petId: id } }, signal })),
        ),
    },
  };
}
