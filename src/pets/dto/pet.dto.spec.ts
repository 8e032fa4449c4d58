import { ArgumentMetadata } from '@nestjs/common';
import { RequestValidationPipe } from '../../common/validation/request-validation.pipe';
import { PetEntity } from '../pet.entity';
import { PetDto } from './pet.dto';
import { NewPetDto } from './new-pet.dto';
import { UpdatePetDto } from './update-pet.dto';

/** The required properties every valid body has besides its name (its fields and references). */
const REQUIRED = {
  ...{ categoryId: 7 },
};
/** The optional ones, each with a valid value. */
const OPTIONAL = {};

/** What the app's validation pipe makes of a body: the DTO, or the fields it refuses. */
async function validate(
  body: unknown,
  metatype: ArgumentMetadata['metatype'] = NewPetDto,
): Promise<object | string[]> {
  try {
    return (await new RequestValidationPipe().transform(body, {
      type: 'body',
      metatype,
      data: undefined,
    })) as object;
  } catch (error) {
    const details = (error as { details?: { field: string }[] }).details ?? [];
    return details.map((detail) => detail.field);
  }
}

describe('NewPetDto', () => {
  it('takes a name and the required properties, and the optional ones and a status when they are sent', async () => {
    await expect(validate({ name: 'First', ...REQUIRED })).resolves.toEqual({ name: 'First', ...REQUIRED });
    const full = { name: 'First', ...REQUIRED, ...OPTIONAL, status: 'pending' };
    await expect(validate(full)).resolves.toEqual(full);
  });

  it.each([
    ['no name', {}, ['name']],
    ['a blank name', { name: '  ' }, ['name']],
    ['a name of 256 characters', { name: 'x'.repeat(256) }, ['name']],
    ['a name that is not a string', { name: 7 }, ['name']],
    ['a status that is not one', { name: 'First', status: 'lost' }, ['status']],
    ['a null status', { name: 'First', status: null }, ['status']],
    ['an id', { name: 'First', id: 1 }, ['id']],
    ['an unknown property', { name: 'First', colour: 'red' }, ['colour']],
    ['a null categoryId', { name: 'First', categoryId: null }, ['categoryId']],
    ['categoryId not an integer', { name: 'First', categoryId: '1' }, ['categoryId']],
    ['categoryId 0', { name: 'First', categoryId: 0 }, ['categoryId']],
    ['categoryId 2^53', { name: 'First', categoryId: 2 ** 53 }, ['categoryId']],
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

describe('UpdatePetDto (a merge patch)', () => {
  it('takes any of the properties, null for the optional ones, and nothing at all', async () => {
    await expect(validate({}, UpdatePetDto)).resolves.toEqual({});
    const removals = Object.fromEntries(Object.keys(OPTIONAL).map((field) => [field, null]));
    await expect(validate({ name: 'New', ...removals }, UpdatePetDto)).resolves.toEqual({
      name: 'New',
      ...removals,
    });
  });

  it.each<[string, object, string[]]>([
    ['a null name', { name: null }, ['name']],
    ['an id', { id: 2 }, ['id']],
    ['a blank name', { name: '' }, ['name']],
    ['a status that is not one', { status: 'lost' }, ['status']],
    ...Object.keys(REQUIRED).map((field): [string, object, string[]] => [
      `a null ${field}`,
      { [field]: null },
      [field],
    ]),
  ])('refuses %s', async (_label, body, fields) => {
    await expect(validate(body, UpdatePetDto)).resolves.toEqual(fields);
  });
});

describe('PetDto.fromEntity', () => {
  const entity: PetEntity = {
    id: 1,
    name: 'First',
    ...REQUIRED,
    ...OPTIONAL,
    status: 'pending',
    version: 3,
  };

  it('copies the columns but the version, which is the ETag', () => {
    expect(PetDto.fromEntity(entity)).toStrictEqual({
      id: 1,
      name: 'First',
      ...REQUIRED,
      ...OPTIONAL,
      status: 'pending',
    });
  });

  it('leaves out what the animal does not have, never null', () => {
    const none = Object.fromEntries(Object.keys(OPTIONAL).map((field) => [field, null]));
    const bare = { ...entity, ...none, status: null };
    expect(PetDto.fromEntity(bare)).toStrictEqual({ id: 1, name: 'First', ...REQUIRED });
  });
});
