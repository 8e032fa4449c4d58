import { ArgumentMetadata } from '@nestjs/common';
import { RequestValidationPipe } from '../../common/validation/request-validation.pipe';
import { __Item__Entity } from '../__item-kebab__.entity';
import { __Item__Dto } from './__item-kebab__.dto';
import { New__Item__Dto } from './new-__item-kebab__.dto';
// @if update
import { Update__Item__Dto } from './update-__item-kebab__.dto';
// @end

/** The required properties every valid body has besides its name (its fields and references). */
const REQUIRED = {
  ...__REQUIRED_FIELDS__,
  // @each reference
  __ref__Id: 1,
  // @end
};
/** The optional ones, each with a valid value. */
const OPTIONAL = __OPTIONAL_FIELDS__;

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
  // @if createStatus
  it('takes a name and the required properties, and the optional ones and a status when they are sent', async () => {
    await expect(validate({ name: 'First', ...REQUIRED })).resolves.toEqual({ name: 'First', ...REQUIRED });
    const full = { name: 'First', ...REQUIRED, ...OPTIONAL, status: '__other_state__' };
    await expect(validate(full)).resolves.toEqual(full);
  });
  // @end
  // @if !createStatus
  it('takes a name and the required properties, and the optional ones when they are sent', async () => {
    await expect(validate({ name: 'First', ...REQUIRED })).resolves.toEqual({ name: 'First', ...REQUIRED });
    const full = { name: 'First', ...REQUIRED, ...OPTIONAL };
    await expect(validate(full)).resolves.toEqual(full);
  });
  // @end

  it.each([
    ['no name', {}, ['name']],
    ['a blank name', { name: '  ' }, ['name']],
    ['a name of 256 characters', { name: 'x'.repeat(256) }, ['name']],
    ['a name that is not a string', { name: 7 }, ['name']],
    ['a status that is not one', { name: 'First', status: 'lost' }, ['status']],
    ['a null status', { name: 'First', status: null }, ['status']],
    // @if !createStatus
    ['a status: a new __noun__ is __default_state__', { name: 'First', status: '__default_state__' }, ['status']],
    // @end
    ['an id', { name: 'First', id: 1 }, ['id']],
    ['an unknown property', { name: 'First', colour: 'red' }, ['colour']],
    // @each field
    ['a null __field__', { name: 'First', __field__: null }, ['__field__']],
    // @if text
    ['__field__ not a string', { name: 'First', __field__: 7 }, ['__field__']],
    ['__field__ of __field_max__ + 1 characters', { name: 'First', __field__: 'x'.repeat(__field_max__ + 1) }, ['__field__']],
    // @end
    // @if int64
    ['__field__ not an integer', { name: 'First', __field__: '1' }, ['__field__']],
    ['__field__ 0', { name: 'First', __field__: 0 }, ['__field__']],
    ['__field__ 2^53', { name: 'First', __field__: 2 ** 53 }, ['__field__']],
    // @end
    // @end
    // @each reference
    ['__ref__Id not an id', { name: 'First', __ref__Id: '1' }, ['__ref__Id']],
    ['__ref__Id 0', { name: 'First', __ref__Id: 0 }, ['__ref__Id']],
    // @end
  ])('refuses %s', async (_label, body, fields) => {
    await expect(validate({ ...REQUIRED, ...body })).resolves.toEqual(fields);
  });

  it('needs each required property', async () => {
    for (const field of Object.keys(REQUIRED)) {
      const body: Record<string, unknown> = { name: 'First', ...REQUIRED };
      delete body[field];
      await expect(validate(body)).resolves.toEqual([field]);
    }
  });
});
// @if update

describe('Update__Item__Dto (a merge patch)', () => {
  it('takes any of the properties, null for the optional ones, and nothing at all', async () => {
    await expect(validate({}, Update__Item__Dto)).resolves.toEqual({});
    const removals = Object.fromEntries(Object.keys(OPTIONAL).map((field) => [field, null]));
    await expect(validate({ name: 'New', ...removals }, Update__Item__Dto)).resolves.toEqual({
      name: 'New',
      ...removals,
    });
  });

  it.each<[string, object, string[]]>([
    ['a null name', { name: null }, ['name']],
    // @if defaultState
    ['a null status', { status: null }, ['status']],
    // @end
    ['an id', { id: 2 }, ['id']],
    ['a blank name', { name: '' }, ['name']],
    ['a status that is not one', { status: 'lost' }, ['status']],
    ...Object.keys(REQUIRED).map((field): [string, object, string[]] => [`a null ${field}`, { [field]: null }, [field]]),
    // @if immutables
    ...(__IMMUTABLE_NAMES__ as const).map((field): [string, object, string[]] => [
      `a change of ${field}, which is kept from the create`,
      { [field]: REQUIRED[field] },
      [field],
    ]),
    // @end
  ])('refuses %s', async (_label, body, fields) => {
    await expect(validate(body, Update__Item__Dto)).resolves.toEqual(fields);
  });
});
// @end

describe('__Item__Dto.fromEntity', () => {
  const entity: __Item__Entity = {
    id: 1,
    name: 'First',
    ...REQUIRED,
    ...OPTIONAL,
    status: '__other_state__',
    version: 3,
  };

  it('copies the columns but the version, which is the ETag', () => {
    expect(__Item__Dto.fromEntity(entity)).toStrictEqual({ id: 1, name: 'First', ...REQUIRED, ...OPTIONAL, status: '__other_state__' });
  });

  it('leaves out what the __noun__ does not have, never null', () => {
    const none = Object.fromEntries(Object.keys(OPTIONAL).map((field) => [field, null]));
    // @if defaultState
    const bare = { ...entity, ...none };
    expect(__Item__Dto.fromEntity(bare)).toStrictEqual({ id: 1, name: 'First', ...REQUIRED, status: '__other_state__' });
    // @end
    // @if !defaultState
    const bare = { ...entity, ...none, status: null };
    expect(__Item__Dto.fromEntity(bare)).toStrictEqual({ id: 1, name: 'First', ...REQUIRED });
    // @end
  });
});
