import { ArgumentMetadata } from '@nestjs/common';
import { RequestValidationPipe } from '../../common/validation/request-validation.pipe';
import { __Item__Dto } from './__item-kebab__.dto';
import { New__Item__Dto } from './new-__item-kebab__.dto';

const BODY: ArgumentMetadata = { type: 'body', metatype: New__Item__Dto, data: undefined };

/** What the app's validation pipe makes of a body: the DTO, or the fields it refuses. */
async function validate(body: unknown): Promise<New__Item__Dto | string[]> {
  try {
    return (await new RequestValidationPipe().transform(body, BODY)) as New__Item__Dto;
  } catch (error) {
    const details = (error as { details?: { field: string }[] }).details ?? [];
    return details.map((detail) => detail.field);
  }
}

describe('New__Item__Dto', () => {
  it('takes a name, and a description when one is sent', async () => {
    await expect(validate({ name: 'First' })).resolves.toEqual({ name: 'First' });
    await expect(validate({ name: 'First', description: 'More' })).resolves.toEqual({
      name: 'First',
      description: 'More',
    });
  });

  it.each([
    ['no name', {}, ['name']],
    ['a blank name', { name: '  ' }, ['name']],
    ['a name of 256 characters', { name: 'x'.repeat(256) }, ['name']],
    ['a name that is not a string', { name: 7 }, ['name']],
    ['a null description', { name: 'First', description: null }, ['description']],
    ['an id', { name: 'First', id: 1 }, ['id']],
    ['an unknown property', { name: 'First', colour: 'red' }, ['colour']],
  ])('refuses %s', async (_label, body, fields) => {
    await expect(validate(body)).resolves.toEqual(fields);
  });
});

describe('__Item__Dto.fromEntity', () => {
  it('copies the columns, leaving out a description the __noun__ does not have', () => {
    expect(__Item__Dto.fromEntity({ id: 1, name: 'First', description: 'More' })).toStrictEqual({
      id: 1,
      name: 'First',
      description: 'More',
    });
    expect(JSON.stringify(__Item__Dto.fromEntity({ id: 2, name: 'Second', description: null }))).toBe(
      '{"id":2,"name":"Second"}',
    );
  });
});
