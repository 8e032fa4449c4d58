import { Controller, Delete, Get, Module, Patch, Post } from '@nestjs/common';
import { Public } from '../auth/public.decorator';
import { RequiredScope, SERVICE_SCOPES, unknownScope } from '../common/scopes';
import { FEATURES } from '../features';
import { vocabularyOf } from './vocabulary';

/** A module as the generator writes one (`store-orders`, every operation), and an action of its own. */
@Controller('store-orders')
class StoreOrdersController {
  @Get()
  listStoreOrders(): void {}

  @Post()
  createStoreOrder(): void {}

  @Get(':storeOrderId')
  getStoreOrder(): void {}

  @Patch(':storeOrderId')
  updateStoreOrder(): void {}

  @Delete(':storeOrderId')
  deleteStoreOrder(): void {}

  @Post(':storeOrderId/refund')
  refundStoreOrder(): void {}

  @RequiredScope('refunds:manage')
  @Post(':storeOrderId/write-off')
  writeOffStoreOrder(): void {}
}

@Public()
@Controller('status')
class StatusController {
  @Get()
  status(): void {}
}

@Module({ controllers: [StoreOrdersController, StatusController] })
class StoreOrdersModule {}

describe('vocabularyOf', () => {
  it("knows a generated module's scopes and events without an edit, and the service's own scopes", () => {
    const { scopes, eventTypes } = vocabularyOf([StoreOrdersModule]);

    expect([...scopes].sort()).toEqual(
      [...SERVICE_SCOPES, 'refunds:manage', 'store-orders:read', 'store-orders:write'].sort(),
    );
    expect(Object.fromEntries(eventTypes)).toEqual({
      'store-order.created': 'store-orders:read',
      'store-order.updated': 'store-orders:read',
      'store-order.deleted': 'store-orders:read',
    });
  });

  it("knows the pets' scopes and the events pets.service publishes", () => {
    const vocabulary = vocabularyOf(FEATURES.map((feature) => feature.module));

    expect(unknownScope(vocabulary, ['pets:read', 'pets:write', ...SERVICE_SCOPES])).toBeUndefined();
    expect(unknownScope(vocabulary, ['pets:read', 'pets:manage', 'foo:read'])).toBe('pets:manage');
    // A generated module adds its own: only pets' are known here.
    expect(Object.fromEntries(vocabulary.eventTypes)).toMatchObject({
      'pet.created': 'pets:read',
      'pet.updated': 'pets:read',
    });
    expect(vocabulary.eventTypes.has('pet.deleted')).toBe(false);
  });
});
