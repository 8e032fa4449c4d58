import { TestingModule } from '@nestjs/testing';
import { featureTestingModule } from '../../test/support/feature-module';
// @if references
import { sampleBody } from '../../test/support/samples';
// @end
import { ApiException } from '../common/errors/api-exception';
import { encodeCursor } from '../common/pagination/cursor';
import { Transactions } from '../database/transactions';
// @each reference
import { __RefsService__ } from '../__ref_folder__/__ref_folder__.service';
// @end
import { __Items__Module } from './__items-kebab__.module';
import { __Items__Service } from './__items-kebab__.service';
import { New__Item__Dto } from './dto/new-__item-kebab__.dto';

/** The service as Nest wires it in its module, on a real, migrated in-memory SQLite database. */
describe('__Items__Service', () => {
  let moduleRef: TestingModule;
  let service: __Items__Service;
  /** What every body below adds to the fields it is about: its required fields and references. */
  let required: Record<string, unknown> = {};
  const body = (fields: Partial<New__Item__Dto>) => ({ ...required, ...fields }) as New__Item__Dto;
  const OPTIONAL = __OPTIONAL_FIELDS__;
  const none = Object.fromEntries(Object.keys(OPTIONAL).map((field) => [field, null]));
  let transactions: Transactions;
  // @if !references
  const create = (dto: New__Item__Dto) => transactions.run((work) => service.create(dto, work));
  // @end
  // @if references
  /** New records for the next body to refer to: a rule of the module may use one up. */
  async function refer(): Promise<void> {
    // @each reference
    const __ref__ = (await sampleBody('__NewRef__')) as never;
    required.__ref__Id = (await transactions.run((work) => moduleRef.get(__RefsService__).create(__ref__, work))).id;
    // @end
  }
  /** Each __noun__ refers to records of its own. */
  async function create(dto: New__Item__Dto) {
    const created = await transactions.run((work) => service.create(dto, work));
    await refer();
    return created;
  }
  // @end
  // @if update
  const always = () => undefined;
  type Update = Parameters<__Items__Service['update']>;
  const update = (id: number, patch: Update[1], ifMatch: Update[2]) =>
    transactions.run((work) => service.update(id, patch, ifMatch, work));
  // @end
  // @if delete
  const remove = (id: number, ifMatch: Parameters<__Items__Service['delete']>[1]) =>
    transactions.run((work) => service.delete(id, ifMatch, work));
  // @end

  beforeEach(async () => {
    moduleRef = await featureTestingModule(__Items__Module);
    service = moduleRef.get(__Items__Service);
    transactions = moduleRef.get(Transactions);
    required = { ...__REQUIRED_FIELDS__ };
    // @if references
    await refer();
    // @end
  });

  afterEach(async () => {
    await moduleRef.close();
  });

  it('creates __a_noun__ with a new id, version 1 and the default status, and gets it back', async () => {
    // @if !expectSent
    const first = await create(body({ name: 'First', ...OPTIONAL }));
    const second = await create(body({ name: 'Second', status: '__other_state__' }));

    expect(first).toEqual({ id: 1, name: 'First', ...required, ...OPTIONAL, status: __DEFAULT_STATE__, version: 1 });
    expect(second).toEqual({ id: 2, name: 'Second', ...required, ...none, status: '__other_state__', version: 1 });
    // @end
    // @if expectSent
    const firstBody = body({ name: 'First', ...OPTIONAL });
    const first = await create(firstBody);
    // @if createStatus
    const secondBody = body({ name: 'Second', status: '__other_state__' });
    const second = await create(secondBody);

    expect(first).toEqual({ id: 1, ...firstBody, status: __DEFAULT_STATE__, version: 1 });
    expect(second).toEqual({ id: 2, ...none, ...secondBody, version: 1 });
    // @end
    // @if !createStatus
    const secondBody = body({ name: 'Second' });
    const second = await update((await create(secondBody)).id, { status: '__other_state__' }, always);

    expect(first).toEqual({ id: 1, ...firstBody, status: __DEFAULT_STATE__, version: 1 });
    expect(second).toEqual({ id: 2, ...none, ...secondBody, status: '__other_state__', version: 2 });
    // @end
    // @end
    await expect(service.get(2)).resolves.toEqual(second);
  });

  it('answers 404 not_found for an id no __noun__ has', async () => {
    await expect(service.get(42)).rejects.toMatchObject({ code: 'not_found', message: 'No __noun__ has id 42.' });
  });

  it('lists page by page in id order, with a cursor while more follow, and by status', async () => {
    for (const name of ['a', 'b', 'c']) await create(body({ name }));
    // @if createStatus
    await create(body({ name: 'd', status: '__other_state__' }));
    // @end
    // @if !createStatus
    await update((await create(body({ name: 'd' }))).id, { status: '__other_state__' }, always);
    // @end

    const first = await service.list({ limit: 2 });
    expect(first.items.map((__item__) => __item__.name)).toEqual(['a', 'b']);
    expect(first.nextCursor).toBe(encodeCursor({ afterId: 2, filter: null }));

    const last = await service.list({ limit: 2, cursor: first.nextCursor });
    expect(last.items.map((__item__) => __item__.name)).toEqual(['c', 'd']);
    expect(last.nextCursor).toBeUndefined();
    const other = await service.list({ limit: 2, status: '__other_state__' });
    expect(other.items.map((__item__) => __item__.name)).toEqual(['d']);
  });

  it('refuses a cursor that is not one of this list', async () => {
    const foreign = encodeCursor({ afterId: 1, filter: '__other_state__' });
    await expect(service.list({ limit: 2, cursor: foreign })).rejects.toBeInstanceOf(ApiException);
    await expect(service.list({ limit: 2, cursor: 'bm90LmEuY3Vyc29y.abc' })).rejects.toMatchObject({
      code: 'validation_failed',
    });
  });
  // @each reference

  it('refuses an unknown __ref__Id with its own code, naming the field', async () => {
    await expect(create(body({ name: 'Lost', __ref__Id: 987_654 }))).rejects.toMatchObject({
      code: '__ref_code__',
      details: [expect.objectContaining({ field: '__ref__Id' })],
    });
    await expect(service.list({ limit: 10 })).resolves.toEqual({ items: [] });
  });
  // @end
  // @if update

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

  it('asks `ifMatch` about the __noun__ as it is, and changes nothing when it refuses', async () => {
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
  // @end
  // @if delete

  it('deletes __a_noun__ once: then it is gone', async () => {
    const created = await create(body({ name: 'Doomed' }));
    const stale = () => {
      throw new ApiException('precondition_failed');
    };

    await expect(remove(created.id, stale)).rejects.toMatchObject({ code: 'precondition_failed' });
    await remove(created.id, () => undefined);
    await expect(service.get(created.id)).rejects.toMatchObject({ code: 'not_found' });
    await expect(remove(created.id, () => undefined)).rejects.toMatchObject({ code: 'not_found' });
  });
  // @end
});
