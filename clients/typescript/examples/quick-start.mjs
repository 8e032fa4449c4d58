// Adds an animal, lists the sold ones and reads one back, riding through restarts and limits.
//   PETSTORE_URL=http://localhost:3000/v1 PETSTORE_API_KEY=<key> npm run example -w @petstore/client
import { createPetStoreClient, PetStoreError } from '@petstore/client';

const client = createPetStoreClient({
  baseUrl: process.env.PETSTORE_URL ?? 'http://localhost:3000/v1',
  apiKey: process.env.PETSTORE_API_KEY ?? '',
});

try {
  // One Idempotency-Key for every attempt: a retried create never adds the animal twice.
  const rex = await client.pets.create({ name: 'Rex', categoryId: 7, status: 'sold' });
  console.log('created', rex);

  const page = await client.pets.list({ status: 'sold', limit: 5 });
  console.log(`first page: ${page.items.length} sold`, page.nextCursor ? '(more)' : '');

  let count = 0;
  for await (const _pet of client.pets.listAll({ status: 'sold' })) count++;
  console.log(`${count} sold in all`);
} catch (error) {
  if (!(error instanceof PetStoreError)) throw error;
  switch (error.code) {
    case 'unauthorized':
      console.error('Set PETSTORE_API_KEY to a valid key (npm run apikey -- create).');
      break;
    case 'validation_failed':
      console.error(error.message, error.details);
      break;
    default:
      console.error(`${error.status} ${error.code}: ${error.message} (request ${error.requestId})`);
  }
  process.exitCode = 1;
}
