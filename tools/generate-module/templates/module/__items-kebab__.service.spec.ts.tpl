import { TestingModule } from '@nestjs/testing';
import { featureTestingModule } from '../../test/support/feature-module';
// @if references
import { sampleBody } from '../../test/support/samples';
// @end
import { ApiException } from '../common/errors/api-exception';
import { encodeCursor } from '../common/pagination/cursor';
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
  /** What every body below adds to the fields it is about: its references, to records that exist. */
  let refs: Record<string, number> = {};
  // @if references
  const body = (fields: Partial<New__Item__Dto> & { name: string }) => ({ ...refs, ...fields }) as New__Item__Dto;
  // @end
  // @if !references
  const body = (fields: New__Item__Dto) => fields;
  // @end

  beforeEach(async () => {
    moduleRef = await featureTestingModule(__Items__Module);
    service = moduleRef.get(__Items__Service);
    refs = {};
    // @each reference
    refs.__ref__Id = (await moduleRef.get(__RefsService__).create(await sampleBody('__NewRef__') as never)).id;
    // @end
  });

  afterEach(async () => {
    await moduleRef.close();
  });

  it('creates __a_noun__ with a new id and the default status, and gets it back', async () => {
    const first = await service.create(body({ name: 'First', description: 'The first one' }));
    const second = await service.create(body({ name: 'Second', status: 'archived' }));

    expect(first).toMatchObject({ id: 1, name: 'First', description: 'The first one', status: 'active', ...refs });
    expect(second).toMatchObject({ id: 2, name: 'Second', description: null, status: 'archived' });
    await expect(service.get(2)).resolves.toEqual(second);
  });

  it('answers 404 not_found for an id no __noun__ has', async () => {
    await expect(service.get(42)).rejects.toMatchObject({ code: 'not_found', message: 'No __noun__ has id 42.' });
  });

  it('lists page by page in id order, with a cursor while more follow', async () => {
    for (const name of ['a', 'b', 'c']) await service.create(body({ name }));

    const first = await service.list({ limit: 2 });
    expect(first.items.map((__item__) => __item__.name)).toEqual(['a', 'b']);
    expect(first.nextCursor).toBe(encodeCursor({ afterId: 2, filter: null }));

    const last = await service.list({ limit: 2, cursor: first.nextCursor });
    expect(last.items.map((__item__) => __item__.name)).toEqual(['c']);
    expect(last.nextCursor).toBeUndefined();
  });

  it('refuses a cursor that is not one of this list', async () => {
    const foreign = encodeCursor({ afterId: 1, filter: 'sold' });
    await expect(service.list({ limit: 2, cursor: foreign })).rejects.toBeInstanceOf(ApiException);
    await expect(service.list({ limit: 2, cursor: 'bm90LmEuY3Vyc29y.abc' })).rejects.toMatchObject({
      code: 'validation_failed',
    });
  });
  // @each reference

  it('refuses an unknown __ref__Id with its own code, naming the field', async () => {
    await expect(service.create(body({ name: 'Lost', __ref__Id: 987_654 }))).rejects.toMatchObject({
      code: '__ref_code__',
      details: [expect.objectContaining({ field: '__ref__Id' })],
    });
    await expect(service.list({ limit: 10 })).resolves.toEqual({ items: [] });
  });
  // @end
  // @if update

  it('updates only what a patch names, one version up, while If-Match holds', async () => {
    const created = await service.create(body({ name: 'First', description: 'More' }));
    const always = () => true;

    const renamed = await service.update(created.id, { name: 'Renamed' }, always);
    expect(renamed).toMatchObject({ name: 'Renamed', description: 'More', version: 2 });
    const cleared = await service.update(created.id, { description: null }, (row) => row.version === 2);
    expect(cleared).toMatchObject({ name: 'Renamed', description: null, version: 3 });
    await expect(service.get(created.id)).resolves.toEqual(cleared);

    await expect(service.update(created.id, { name: 'Stale' }, (row) => row.version === 2)).rejects.toMatchObject({
      code: 'precondition_failed',
    });
    await expect(service.update(404, { name: 'None' }, always)).rejects.toMatchObject({ code: 'not_found' });
    await expect(service.get(created.id)).resolves.toMatchObject({ name: 'Renamed', version: 3 });
  });
  // @end
  // @if delete

  it('deletes __a_noun__ once: then it is gone', async () => {
    const created = await service.create(body({ name: 'Doomed' }));

    await expect(service.delete(created.id, () => false)).rejects.toMatchObject({ code: 'precondition_failed' });
    await service.delete(created.id, () => true);
    await expect(service.get(created.id)).rejects.toMatchObject({ code: 'not_found' });
    await expect(service.delete(created.id, () => true)).rejects.toMatchObject({ code: 'not_found' });
  });
  // @end
});
