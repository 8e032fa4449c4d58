/**
 * A client written against the types openapi-typescript generates from openapi.yaml (into
 * test/artifacts/typed-client/, by test/typed-client.e2e-spec.ts, which also type-checks this
 * file strictly before running it). It is left out of `npm run typecheck` and ESLint because
 * the generated types exist only once that test has run.
 */
import createClient from 'openapi-fetch';
import type { components, paths } from '../artifacts/typed-client/petstore-api';

type Pet = components['schemas']['Pet'];
type ApiError = components['schemas']['Error'];
type Client = ReturnType<typeof createClient<paths>>;

export interface RoundTrip {
  created: Pet;
  location: string | null;
  listed: Pet[];
  fetched: Pet;
  deprecation: string | null;
  missing: { status: number; error: ApiError | undefined };
}

/** Create, list with a filter, get: through the typed client only. */
export async function roundTrip(baseUrl: string, apiKey: string): Promise<RoundTrip> {
  const client: Client = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${apiKey}` } });

  const created = await client.POST('/pets', {
    body: { name: 'Typed Rex', categoryId: 42, status: 'pending' },
  });
  if (!created.data) throw new Error(`createPet failed: ${JSON.stringify(created.error)}`);

  const listed = await client.GET('/pets', { params: { query: { status: 'pending', limit: 100 } } });
  if (!listed.data) throw new Error(`listPets failed: ${JSON.stringify(listed.error)}`);

  const fetched = await client.GET('/pets/{petId}', { params: { path: { petId: created.data.id } } });
  if (!fetched.data) throw new Error(`getPet failed: ${JSON.stringify(fetched.error)}`);

  const missing = await client.GET('/pets/{petId}', { params: { path: { petId: 987654321 } } });

  return {
    created: created.data,
    location: created.response.headers.get('Location'),
    listed: listed.data,
    fetched: fetched.data,
    deprecation: fetched.response.headers.get('Deprecation'),
    missing: { status: missing.response.status, error: missing.error },
  };
}

/** Never called: the type checker must refuse each call, or its @ts-expect-error is unused (an error). */
export function misuses(client: Client): void {
  // @ts-expect-error -- "lost" is not a PetStatus
  void client.GET('/pets', { params: { query: { status: 'lost' } } });
  // @ts-expect-error -- limit is a number
  void client.GET('/pets', { params: { query: { limit: '10' } } });
  // @ts-expect-error -- categoryId is required
  void client.POST('/pets', { body: { name: 'Rex' } });
  // @ts-expect-error -- petId is required
  void client.GET('/pets/{petId}', { params: { path: {} } });
  // @ts-expect-error -- no operation deletes animals
  void client.DELETE('/pets/{petId}', { params: { path: { petId: 1 } } });
}
