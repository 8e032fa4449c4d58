// Compiled by `npm run build` (tsconfig.check.json), never run: the types refuse what the
// service refuses. Each @ts-expect-error fails the build if its line ever compiles.
import { createPetStoreClient, PetStoreError, type ErrorCode, type Pet } from '../src/index.js';

const client = createPetStoreClient({ baseUrl: 'http://localhost:3000/v1', apiKey: 'key' });

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
