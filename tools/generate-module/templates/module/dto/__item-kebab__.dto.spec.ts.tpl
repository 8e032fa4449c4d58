import { ArgumentMetadata } from '@nestjs/common';
import { RequestValidationPipe } from '../../common/validation/request-validation.pipe';
import { __Item__Entity } from '../__item-kebab__.entity';
import { __Item__Dto } from './__item-kebab__.dto';
import { New__Item__Dto } from './new-__item-kebab__.dto';
// @if update
import { Update__Item__Dto } from './update-__item-kebab__.dto';
// @end

/** The references every valid body has. */
const REFS = {
  // @each reference
  __ref__Id: 1,
  // @end
};

/** What the app's validation pipe makes of a body: the DTO, or the fields it refuses. */
async function validate(body: unknown, metatype: ArgumentMetadata['metatype'] = New__Item__Dto): Promise<object | string[]> {
  try {
    return (await new RequestValidationPipe().transform(body, { type: 'body', metatype, data: undefined })) as object;
  } catch (error) {
    const details = (error as { details?: { field: string }[] }).details ?? [];
    return details.map((detail) => detail.field);
  }
}

describe('New__Item__Dto', () => {
  it('takes a name, and a description and a status when they are sent', async () => {
    await expect(validate({ name: 'First', ...REFS })).resolves.toEqual({ name: 'First', ...REFS });
    await expect(validate({ name: 'First', description: 'More', status: 'archived', ...REFS })).resolves.toEqual({
      name: 'First',
      description: 'More',
      status: 'archived',
      ...REFS,
    });
  });

  it.each([
    ['no name', {}, ['name']],
    ['a blank name', { name: '  ' }, ['name']],
    ['a name of 256 characters', { name: 'x'.repeat(256) }, ['name']],
    ['a name that is not a string', { name: 7 }, ['name']],
    ['a null description', { name: 'First', description: null }, ['description']],
    ['a status that is not one', { name: 'First', status: 'lost' }, ['status']],
    ['an id', { name: 'First', id: 1 }, ['id']],
    ['an unknown property', { name: 'First', colour: 'red' }, ['colour']],
    // @each reference
    ['__ref__Id not an id', { name: 'First', __ref__Id: '1' }, ['__ref__Id']],
    ['__ref__Id 0', { name: 'First', __ref__Id: 0 }, ['__ref__Id']],
    // @end
  ])('refuses %s', async (_label, body, fields) => {
    await expect(validate({ ...REFS, ...body })).resolves.toEqual(fields);
  });
  // @each reference

  it('needs __ref__Id', async () => {
    const { __ref__Id: _left, ...rest } = { name: 'First', ...REFS };
    await expect(validate(rest)).resolves.toEqual(['__ref__Id']);
  });
  // @end
});
// @if update

describe('Update__Item__Dto (a merge patch)', () => {
  it('takes any of the properties, null for the description, and nothing at all', async () => {
    await expect(validate({}, Update__Item__Dto)).resolves.toEqual({});
    await expect(validate({ name: 'New', description: null }, Update__Item__Dto)).resolves.toEqual({
      name: 'New',
      description: null,
    });
  });

  it.each([
    ['a null name', { name: null }, ['name']],
    ['a null status', { status: null }, ['status']],
    ['an id', { id: 2 }, ['id']],
    ['a blank name', { name: '' }, ['name']],
  ])('refuses %s', async (_label, body, fields) => {
    await expect(validate(body, Update__Item__Dto)).resolves.toEqual(fields);
  });
});
// @end

describe('__Item__Dto.fromEntity', () => {
  it('copies the columns, leaving out a description the __noun__ does not have', () => {
    const entity: __Item__Entity = {
      id: 1,
      name: 'First',
      description: 'More',
      status: 'active',
      ...REFS,
      // @if mutable
      version: 1,
      // @end
    };
    expect(__Item__Dto.fromEntity(entity)).toStrictEqual({
      id: 1,
      name: 'First',
      description: 'More',
      status: 'active',
      ...REFS,
    });
    expect(JSON.stringify(__Item__Dto.fromEntity({ ...entity, description: null }))).toBe(
      JSON.stringify({ id: 1, name: 'First', status: 'active', ...REFS }),
    );
  });
});
