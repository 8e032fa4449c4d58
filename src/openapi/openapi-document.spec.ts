import type { OpenAPIObject } from '@nestjs/swagger';
import { nameOperations } from './openapi-document';

function documentWith(operations: Record<string, Record<string, { operationId: string }>>): OpenAPIObject {
  return { openapi: '3.0.0', info: { title: 't', version: '1' }, paths: operations };
}

describe('nameOperations', () => {
  it("names an operation after its handler, and prefixes the controller's name where handlers share a name", () => {
    const document = documentWith({
      '/pets': {
        get: { operationId: 'PetsController#listPets' },
        post: { operationId: 'PetsController#createPet' },
      },
      '/orders': { get: { operationId: 'OrdersController#list' } },
      '/store-items': { get: { operationId: 'StoreItemsController#list' } },
      '/health/live': { get: { operationId: 'liveness' } },
    });

    nameOperations(document);

    expect(
      Object.values(document.paths).flatMap((path) =>
        Object.values(path as Record<string, { operationId: string }>).map(
          (operation) => operation.operationId,
        ),
      ),
    ).toEqual(['listPets', 'createPet', 'ordersList', 'storeItemsList', 'liveness']);
  });
});
