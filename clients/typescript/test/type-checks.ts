// Compiled by `npm run build` (tsconfig.json), never run: the types refuse what the
// service refuses. Each @ts-expect-error fails the build if its line ever compiles.
import type { IncomingHttpHeaders } from 'node:http';
import {
  createPetStoreClient,
  PetStoreError,
  verifyWebhook,
  type ErrorCode,
  type Event,
  type Pet,
  type WebhookEndpointWithSecret,
} from '../src/index.js';

const client = createPetStoreClient({ baseUrl: 'http://localhost:3000/v1', apiKey: 'key' });

export function authentication(): void {
  createPetStoreClient({ baseUrl: 'http://localhost:3000/v1', token: () => 'eyJhbGciOiJFUzI1NiJ9.e30.c2ln' });
  createPetStoreClient({ baseUrl: 'http://localhost:3000/v1', token: () => Promise.resolve('token') });
  // @ts-expect-error an API key or a token provider, not both
  createPetStoreClient({ baseUrl: 'http://localhost:3000/v1', apiKey: 'key', token: () => 'token' });
  // @ts-expect-error one of the two is required
  createPetStoreClient({ baseUrl: 'http://localhost:3000/v1' });
  // @ts-expect-error a provider, called per request: not the token itself
  createPetStoreClient({ baseUrl: 'http://localhost:3000/v1', token: 'token' });
  // @ts-expect-error the provider answers a string
  createPetStoreClient({ baseUrl: 'http://localhost:3000/v1', token: () => 42 });
}

export async function misuses(): Promise<void> {
  const pet: Pet = await client.pets.create({ name: 'Rex', categoryId: 1, status: 'sold' });
  // @ts-expect-error categoryId is required
  await client.pets.create({ name: 'Rex' });
  // @ts-expect-error no property beyond NewPet's
  await client.pets.create({ name: 'Rex', categoryId: 1, color: 'brown' });
  // @ts-expect-error the service assigns the id
  await client.pets.create({ id: pet.id, name: 'Rex', categoryId: 1 });
  // @ts-expect-error status is one of available, pending, sold
  await client.pets.list({ status: 'lost' });
  // @ts-expect-error ids are numbers
  await client.pets.get('1');
}

export function codes(error: PetStoreError): string {
  const code: ErrorCode = error.code;
  // @ts-expect-error not a code of the catalogue
  if (code === 'not_a_code') return 'never';
  return code === 'rate_limited' ? `retry in ${error.retryAfter ?? '?'} s` : code;
}

export async function events(): Promise<number> {
  const { items } = await client.events.list({ type: 'pet.*', after: 'evt_0000000000000001', limit: 10 });
  const first: Event | undefined = items[0];
  // @ts-expect-error no such filter
  await client.events.list({ status: 'sold' });
  // @ts-expect-error listAll follows the cursor itself
  client.events.listAll({ cursor: 'abc' });
  for await (const event of client.events.listAll({ type: 'pet.updated' })) {
    // `data` is the record as answered, and its version: its own properties are unknown here.
    const name: unknown = event.data.name;
    void name;
    return event.data.version;
  }
  return first?.data.id ?? 0;
}

export async function webhookEndpoints(): Promise<void> {
  const made: WebhookEndpointWithSecret = await client.webhookEndpoints.create(
    { url: 'https://hooks.example.com/petstore', eventTypes: ['pet.*'] },
    { idempotencyKey: 'key-1' },
  );
  // @ts-expect-error url is required
  await client.webhookEndpoints.create({ eventTypes: ['*'] });
  const read = await client.webhookEndpoints.get(made.id);
  // @ts-expect-error only create and rotateSecret answer the secret
  void read.secret;
  const changed = await client.webhookEndpoints.update(
    made.id,
    { description: null, enabled: false },
    { ifMatch: read.etag },
  );
  // @ts-expect-error the API requires If-Match
  await client.webhookEndpoints.update(made.id, { enabled: true });
  // @ts-expect-error the secret is not patched: it is rotated
  await client.webhookEndpoints.update(made.id, { secret: made.secret }, { ifMatch: '*' });
  const rotated: string = (await client.webhookEndpoints.rotateSecret(made.id, { graceSeconds: 60 })).secret;
  void rotated;
  const { items } = await client.webhookEndpoints.deliveries(made.id, { status: 'failed', limit: 5 });
  // @ts-expect-error status is pending, succeeded or failed
  await client.webhookEndpoints.deliveries(made.id, { status: 'lost' });
  if (items[0]) await client.webhookEndpoints.resend(made.id, items[0].id);
  await client.webhookEndpoints.delete(made.id, { ifMatch: changed.etag });
}

export async function receive(body: string, headers: IncomingHttpHeaders, secret: string): Promise<string> {
  const event: Event = await verifyWebhook(body, headers, secret);
  await verifyWebhook(body, new Headers(), secret, { toleranceSeconds: 60, now: new Date() });
  // @ts-expect-error the raw body, a string: not parsed JSON
  await verifyWebhook({ id: 'evt_1' }, headers, secret);
  return event.type;
}
