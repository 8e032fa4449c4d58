import { TestingModule } from '@nestjs/testing';
import { featureTestingModule } from '../../test/support/feature-module';
import { ApiException } from '../common/errors/api-exception';
import { encodeCursor } from '../common/pagination/cursor';
import { Transactions } from '../database/transactions';
import { PetsModule } from './pets.module';
import { PetsService } from './pets.service';
import { NewPetDto } from './dto/new-pet.dto';

/** The service as Nest wires it in its module, on a real, migrated in-memory SQLite database. */
describe('PetsService', () => {
  let moduleRef: TestingModule;
  let service: PetsService;
  /** What every body below adds to the fields it is about: its required fields and references. */
  let required: Record<string, unknown> = {};
  const body = (fields: Partial<NewPetDto>) => ({ ...required, ...fields }) as NewPetDto;
  const OPTIONAL = {};
  const none = Object.fromEntries(Object.keys(OPTIONAL).map((field) => [field, null]));
  let transactions: Transactions;
  const create = (dto: NewPetDto) => transactions.run((work) => service.create(dto, work));
  const always = () => undefined;
  type Update = Parameters<PetsService['update']>;
  const update = (id: number, patch: Update[1], ifMatch: Update[2]) =>
    transactions.run((work) => service.update(id, patch, ifMatch, work));

  beforeEach(async () => {
    moduleRef = await featureTestingModule(PetsModule);
    service = moduleRef.get(PetsService);
    transactions = moduleRef.get(Transactions);
    required = { ...{ categoryId: 7 } };
  });

  afterEach(async () => {
    await moduleRef.close();
  });

  it('creates an animal with a new id, version 1 and the default status, and gets it back', async () => {
    const first = await create(body({ name: 'First', ...OPTIONAL }));
    const second = await create(body({ name: 'Second', status: 'pending' }));

    expect(first).toEqual({ id: 1, name: 'First', ...required, ...OPTIONAL, status: null, version: 1 });
    expect(second).toEqual({ id: 2, name: 'Second', ...required, ...none, status: 'pending', version: 1 });
    await expect(service.get(2)).resolves.toEqual(second);
  });

  it('answers 404 not_found for an id no animal has', async () => {
    await expect(service.get(42)).rejects.toMatchObject({
      code: 'not_found',
      message: 'No animal has id 42.',
    });
  });

  it('lists page by page in id order, with a cursor while more follow, and by status', async () => {
    for (const name of ['a', 'b', 'c']) await create(body({ name }));
    await create(body({ name: 'd', status: 'pending' }));

    const first = await service.list({ limit: 2 });
    expect(first.items.map((pet) => pet.name)).toEqual(['a', 'b']);
    expect(first.nextCursor).toBe(encodeCursor({ afterId: 2, filter: null }));

    const last = await service.list({ limit: 2, cursor: first.nextCursor });
    expect(last.items.map((pet) => pet.name)).toEqual(['c', 'd']);
    expect(last.nextCursor).toBeUndefined();
    const other = await service.list({ limit: 2, status: 'pending' });
    expect(other.items.map((pet) => pet.name)).toEqual(['d']);
  });

  it('refuses a cursor that is not one of this list', async () => {
    const foreign = encodeCursor({ afterId: 1, filter: 'pending' });
    await expect(service.list({ limit: 2, cursor: foreign })).rejects.toBeInstanceOf(ApiException);
    await expect(service.list({ limit: 2, cursor: 'bm90LmEuY3Vyc29y.abc' })).rejects.toMatchObject({
      code: 'validation_failed',
    });
  });

  it('updates only what a patch names, one version up, and a patch that changes nothing not at all', async () => {
    const created = await create(body({ name: 'First', ...OPTIONAL }));

    const renamed = await update(created.id, { name: 'Renamed' }, always);
    expect(renamed).toEqual({ ...created, name: 'Renamed', version: 2 });
    await expect(update(created.id, { name: 'Renamed' }, always)).resolves.toEqual(renamed);
    await expect(update(created.id, {}, always)).resolves.toEqual(renamed);
    const cleared = await update(created.id, none, always);
    expect(cleared).toEqual({ ...renamed, ...none, version: Object.keys(none).length > 0 ? 3 : 2 });
    await expect(service.get(created.id)).resolves.toEqual(cleared);
  });

  it('asks `ifMatch` about the animal as it is, and changes nothing when it refuses', async () => {
    const created = await create(body({ name: 'First' }));
    const stale = () => {
      throw new ApiException('precondition_failed');
    };

    await expect(update(created.id, { name: 'Stale' }, stale)).rejects.toMatchObject({
      code: 'precondition_failed',
    });
    await expect(update(404, { name: 'None' }, stale)).rejects.toMatchObject({ code: 'not_found' });
    await expect(service.get(created.id)).resolves.toEqual(created);
  });
});
