import { ArgumentMetadata, ValidationPipe } from '@nestjs/common';
import { Transform } from 'class-transformer';
import { IsString } from 'class-validator';
import { ListPetsQueryDto } from '../../pets/dto/list-pets-query.dto';
import { NewPetDto } from '../../pets/dto/new-pet.dto';
import { UpdatePetDto } from '../../pets/dto/update-pet.dto';
import { ApiException, validationFailed } from '../errors/api-exception';
import type { ErrorDetailDto } from '../errors/error.dto';
import { MAX_BODY_DEPTH, MAX_REMEMBERED_QUERIES, RequestValidationPipe } from './request-validation.pipe';

const BODY: ArgumentMetadata = { type: 'body', metatype: NewPetDto, data: undefined };
const QUERY: ArgumentMetadata = { type: 'query', metatype: ListPetsQueryDto, data: undefined };

const NAME_RULE = 'name must be a string of 1 to 255 characters, not blank, with no control characters';
const CATEGORY_TYPE_RULE = 'categoryId must be an integer';
const CATEGORY_RANGE_RULE = 'categoryId must be from 1 to 9007199254740991';
const STATUS_RULE = 'status must be one of available, pending, sold';
const LIMIT_RULE = 'limit must be an integer from 1 to 100';
const BODY_RULE = 'the request body must be a JSON object';

/** What the pipe gives back; a synchronous throw becomes a rejection. */
function run(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
  return Promise.resolve().then(() => new RequestValidationPipe().transform(value, metadata));
}

/** The whole validation_failed error the pipe raises for `value`. */
async function failure(value: unknown, metadata: ArgumentMetadata) {
  let thrown: unknown;
  try {
    await run(value, metadata);
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(ApiException);
  const error = thrown as ApiException;
  return { code: error.code, status: error.getStatus(), message: error.message, details: error.details };
}

function validationError(details: ErrorDetailDto[]) {
  return {
    code: 'validation_failed',
    status: 400,
    message: `Validation failed: ${details.map((detail) => detail.message).join('; ')}.`,
    details,
  };
}

function nested(depth: number): unknown {
  let value: unknown = 'leaf';
  for (let level = 0; level < depth; level += 1) value = { n: value };
  return value;
}

describe('validationFailed', () => {
  it('builds a validation_failed ApiException naming every field and rule', () => {
    const error = validationFailed([
      { field: 'name', message: 'name is bad' },
      { field: 'limit', message: 'limit is bad' },
    ]);

    expect(error).toBeInstanceOf(ApiException);
    expect({
      code: error.code,
      status: error.getStatus(),
      message: error.message,
      details: error.details,
    }).toEqual({
      code: 'validation_failed',
      status: 400,
      message: 'Validation failed: name is bad; limit is bad.',
      details: [
        { field: 'name', message: 'name is bad' },
        { field: 'limit', message: 'limit is bad' },
      ],
    });
  });
});

describe('RequestValidationPipe', () => {
  describe('other arguments', () => {
    it.each([
      ['a param without a DTO', { type: 'param', metatype: String, data: 'petId' }],
      ['a body typed Object', { type: 'body', metatype: Object, data: undefined }],
      ['an argument without a type', { type: 'custom', metatype: undefined, data: undefined }],
      ['a param with a class', { type: 'param', metatype: NewPetDto, data: 'x' }],
    ] as Array<[string, ArgumentMetadata]>)('passes %s through untouched', async (_label, metadata) => {
      const value = { anything: 'goes' };

      await expect(run(value, metadata)).resolves.toBe(value);
    });
  });

  describe('NewPet bodies', () => {
    it('turns a valid NewPet into a NewPetDto', async () => {
      const result = await run({ name: 'Rex', categoryId: 7, status: 'available' }, BODY);

      expect(result).toBeInstanceOf(NewPetDto);
      expect(result).toEqual(
        Object.assign(new NewPetDto(), { name: 'Rex', categoryId: 7, status: 'available' as const }),
      );
    });

    it.each([
      ['no status', { name: 'Rex', categoryId: 1 }],
      ['status pending', { name: 'Rex', categoryId: 1, status: 'pending' }],
      ['status sold', { name: 'Rex', categoryId: 1, status: 'sold' }],
      ['the largest exact categoryId', { name: 'Rex', categoryId: 9007199254740991 }],
      ['a name of 255 characters', { name: 'a'.repeat(255), categoryId: 1 }],
      ['a name of 255 astral characters', { name: '😀'.repeat(255), categoryId: 1 }],
      ['a name with spaces around it', { name: '  Rex  ', categoryId: 1 }],
      ['a name with combining and non-Latin characters', { name: 'Zoë Ñandú 猫 e\u0301', categoryId: 1 }],
      ['a name holding a valid surrogate pair', { name: '\ud83d\ude00', categoryId: 1 }],
    ])('accepts %s, keeping the name exactly as sent', async (_label, body) => {
      const result = await run({ ...body }, BODY);

      expect(result).toBeInstanceOf(NewPetDto);
      expect({ ...(result as NewPetDto) }).toEqual(body);
    });

    it.each([
      ['name is missing', { categoryId: 1 }, [{ field: 'name', message: NAME_RULE }]],
      [
        'categoryId is 1.5',
        { name: 'Rex', categoryId: 1.5 },
        [{ field: 'categoryId', message: CATEGORY_TYPE_RULE }],
      ],
      [
        'categoryId is 0',
        { name: 'Rex', categoryId: 0 },
        [{ field: 'categoryId', message: CATEGORY_RANGE_RULE }],
      ],
      [
        'categoryId is -1',
        { name: 'Rex', categoryId: -1 },
        [{ field: 'categoryId', message: CATEGORY_RANGE_RULE }],
      ],
      [
        'categoryId is 2^53 (9007199254740992)',
        { name: 'Rex', categoryId: 9007199254740992 },
        [{ field: 'categoryId', message: CATEGORY_RANGE_RULE }],
      ],
      [
        'categoryId is 1e19',
        { name: 'Rex', categoryId: 1e19 },
        [{ field: 'categoryId', message: CATEGORY_RANGE_RULE }],
      ],
      [
        'categoryId is 1e308',
        { name: 'Rex', categoryId: 1e308 },
        [{ field: 'categoryId', message: CATEGORY_RANGE_RULE }],
      ],
      [
        'status is null',
        { name: 'Rex', categoryId: 1, status: null },
        [{ field: 'status', message: STATUS_RULE }],
      ],
      [
        'status is "unknown"',
        { name: 'Rex', categoryId: 1, status: 'unknown' },
        [{ field: 'status', message: STATUS_RULE }],
      ],
      [
        'status is "Available"',
        { name: 'Rex', categoryId: 1, status: 'Available' },
        [{ field: 'status', message: STATUS_RULE }],
      ],
      [
        'status is ""',
        { name: 'Rex', categoryId: 1, status: '' },
        [{ field: 'status', message: STATUS_RULE }],
      ],
      [
        'status is an array',
        { name: 'Rex', categoryId: 1, status: ['sold'] },
        [{ field: 'status', message: STATUS_RULE }],
      ],
      ['name is ""', { name: '', categoryId: 1 }, [{ field: 'name', message: NAME_RULE }]],
      ['name is blank', { name: '   ', categoryId: 1 }, [{ field: 'name', message: NAME_RULE }]],
      [
        'name is a tab and a newline',
        { name: '\t\n', categoryId: 1 },
        [{ field: 'name', message: NAME_RULE }],
      ],
      ['name holds NUL', { name: 'a\u0000b', categoryId: 1 }, [{ field: 'name', message: NAME_RULE }]],
      [
        'name holds a newline',
        { name: 'Rex\nthe dog', categoryId: 1 },
        [{ field: 'name', message: NAME_RULE }],
      ],
      ['name holds U+001F', { name: 'Rex\u001f', categoryId: 1 }, [{ field: 'name', message: NAME_RULE }]],
      ['name is DEL (U+007F)', { name: '\u007f', categoryId: 1 }, [{ field: 'name', message: NAME_RULE }]],
      [
        'name is a lone high surrogate',
        { name: '\ud800', categoryId: 1 },
        [{ field: 'name', message: NAME_RULE }],
      ],
      [
        'name holds a lone low surrogate',
        { name: 'Rex\udc00', categoryId: 1 },
        [{ field: 'name', message: NAME_RULE }],
      ],
      [
        'name has 256 characters',
        { name: 'a'.repeat(256), categoryId: 1 },
        [{ field: 'name', message: NAME_RULE }],
      ],
      [
        'name has 256 astral characters',
        { name: '😀'.repeat(256), categoryId: 1 },
        [{ field: 'name', message: NAME_RULE }],
      ],
      ['name is a number', { name: 42, categoryId: 1 }, [{ field: 'name', message: NAME_RULE }]],
      ['name is null', { name: null, categoryId: 1 }, [{ field: 'name', message: NAME_RULE }]],
      ['name is an array', { name: ['Rex'], categoryId: 1 }, [{ field: 'name', message: NAME_RULE }]],
      [
        'id is sent',
        { id: 1, name: 'Rex', categoryId: 1 },
        [{ field: 'id', message: 'id is not an allowed property' }],
      ],
      [
        'an unknown property is sent',
        { name: 'Rex', categoryId: 1, owner: 'Ann' },
        [{ field: 'owner', message: 'owner is not an allowed property' }],
      ],
      [
        'a constructor key is sent',
        JSON.parse('{"constructor":{"prototype":{}},"name":"Rex","categoryId":1}'),
        [{ field: 'constructor', message: 'constructor is not an allowed property' }],
      ],
      [
        'a __proto__ key is sent',
        JSON.parse('{"__proto__":{"x":1},"name":"a","categoryId":1}'),
        [{ field: '__proto__', message: '__proto__ is not an allowed property' }],
      ],
    ])('rejects a body where %s', async (_label, body, details) => {
      expect(await failure(body, BODY)).toEqual(validationError(details));
    });

    // Every body below must be refused and name categoryId.
    const notAnInteger: Array<[string, Record<string, unknown>]> = [
      ['categoryId is missing', { name: 'Rex' }],
      ['categoryId is the string "5"', { name: 'Rex', categoryId: '5' }],
      ['categoryId is null', { name: 'Rex', categoryId: null }],
      ['categoryId is true', { name: 'Rex', categoryId: true }],
      ['categoryId is an object', { name: 'Rex', categoryId: { value: 5 } }],
    ];

    it.each(notAnInteger)('rejects a body where %s, naming categoryId', async (_label, body) => {
      expect(await failure(body, BODY)).toEqual({
        code: 'validation_failed',
        status: 400,
        message: expect.stringMatching(/^Validation failed: categoryId must be an integer\.$/),
        details: [{ field: 'categoryId', message: expect.stringMatching(/^categoryId must be /) }],
      });
    });

    it('names both fields when both are missing', async () => {
      expect(await failure({}, BODY)).toEqual({
        code: 'validation_failed',
        status: 400,
        message: expect.stringMatching(
          new RegExp(`^Validation failed: ${NAME_RULE}; categoryId must be an integer\\.$`),
        ),
        details: [
          { field: 'name', message: NAME_RULE },
          { field: 'categoryId', message: CATEGORY_TYPE_RULE },
        ],
      });
    });

    it.each(notAnInteger)('says categoryId must be an integer when %s', async (_label, body) => {
      expect(await failure(body, BODY)).toEqual(
        validationError([{ field: 'categoryId', message: CATEGORY_TYPE_RULE }]),
      );
    });

    it('names every unknown property, and at most ten of them', async () => {
      const body: Record<string, unknown> = { name: 'Rex', categoryId: 1 };
      for (let index = 1; index <= 12; index += 1) body[`extra${index}`] = index;

      expect(await failure(body, BODY)).toEqual(
        validationError(
          Array.from({ length: 10 }, (_, index) => ({
            field: `extra${index + 1}`,
            message: `extra${index + 1} is not an allowed property`,
          })),
        ),
      );
    });

    it('cuts a very long unknown property name to 64 characters', async () => {
      const key = 'k'.repeat(10_000);

      expect(await failure({ name: 'Rex', categoryId: 1, [key]: 1 }, BODY)).toEqual(
        validationError([{ field: 'k'.repeat(64), message: `${'k'.repeat(64)} is not an allowed property` }]),
      );
    });

    it('does not pollute Object.prototype through __proto__', async () => {
      await failure(JSON.parse('{"__proto__":{"polluted":1},"name":"a","categoryId":1}'), BODY);

      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });

    it.each([
      ['an array', [{ name: 'Rex', categoryId: 1 }]],
      ['an empty array', []],
      ['a string', 'Rex'],
      ['a number', 42],
      ['true', true],
      ['null', null],
      ['undefined', undefined],
    ])('rejects a body that is %s', async (_label, body) => {
      expect(await failure(body, BODY)).toEqual(validationError([{ field: 'body', message: BODY_RULE }]));
    });

    it(`lets ${MAX_BODY_DEPTH} levels of nesting through to field validation`, async () => {
      expect(await failure({ name: nested(MAX_BODY_DEPTH - 1), categoryId: 1 }, BODY)).toEqual(
        validationError([{ field: 'name', message: NAME_RULE }]),
      );
    });

    it(`rejects nesting deeper than ${MAX_BODY_DEPTH} levels before validating fields`, async () => {
      expect(await failure({ name: nested(MAX_BODY_DEPTH), categoryId: 1 }, BODY)).toEqual(
        validationError([{ field: 'body', message: 'the request body is nested deeper than 32 levels' }]),
      );
    });

    it('rejects very deep nesting without overflowing the stack', async () => {
      expect(await failure({ name: nested(100_000), categoryId: 1 }, BODY)).toEqual(
        validationError([{ field: 'body', message: 'the request body is nested deeper than 32 levels' }]),
      );
    });
  });

  describe('ListPets queries', () => {
    async function query(value: Record<string, unknown>): Promise<ListPetsQueryDto> {
      const result = await run(value, QUERY);
      expect(result).toBeInstanceOf(ListPetsQueryDto);
      return result as ListPetsQueryDto;
    }

    it('uses a limit of 20 and no status filter by default', async () => {
      expect({ ...(await query({})) }).toEqual({ limit: 20 });
    });

    it('handles the null-prototype object of the query parser', async () => {
      expect({ ...(await query(Object.assign(Object.create(null), { limit: '5' }))) }).toEqual({ limit: 5 });
    });

    it.each([
      ['1', 1],
      ['100', 100],
      ['42', 42],
      ['007', 7],
      ['0000000000000000000000000005', 5],
      ['00000000000000000000000000100', 100],
    ])('accepts limit %s as %d', async (raw, limit) => {
      expect({ ...(await query({ limit: raw })) }).toEqual({ limit });
    });

    it.each(['available', 'pending', 'sold'])('accepts status %s', async (status) => {
      expect({ ...(await query({ status, limit: '10' })) }).toEqual({ limit: 10, status });
    });

    it('ignores unknown query parameters', async () => {
      expect({ ...(await query({ limit: '3', page: '2', offset: 'abc', id: '1' })) }).toEqual({ limit: 3 });
    });

    it.each([
      ['0', '0'],
      ['101', '101'],
      ['-1', '-1'],
      ['1.5', '1.5'],
      ['abc', 'abc'],
      ['empty', ''],
      ['1e2', '1e2'],
      ['+5', '+5'],
      [' 5', ' 5'],
      ['0x10', '0x10'],
      ['a huge number', '99999999999999999999'],
      ['a zero-padded 101', '0000000000000000000101'],
      ['5,000 digits', '9'.repeat(5000)],
      ['given twice', ['1', '2']],
      ['a nested object', { value: '1' }],
    ])('rejects limit %s', async (_label, limit) => {
      expect(await failure({ limit }, QUERY)).toEqual(
        validationError([{ field: 'limit', message: LIMIT_RULE }]),
      );
    });

    it.each([
      ['unknown', 'unknown'],
      ['in upper case', 'SOLD'],
      ['empty', ''],
      ['given twice', ['sold', 'pending']],
    ])('rejects status %s', async (_label, status) => {
      expect(await failure({ status }, QUERY)).toEqual(
        validationError([{ field: 'status', message: STATUS_RULE }]),
      );
    });

    it('names both parameters when both are wrong', async () => {
      expect(await failure({ limit: '0', status: 'lost' }, QUERY)).toEqual(
        validationError([
          { field: 'limit', message: LIMIT_RULE },
          { field: 'status', message: STATUS_RULE },
        ]),
      );
    });
  });

  describe('bodies of plain values', () => {
    let validations: jest.SpyInstance;
    const full = new ValidationPipe({
      transform: true,
      whitelist: true,
      forbidNonWhitelisted: true,
      transformOptions: { enableImplicitConversion: false },
    });
    const patch: ArgumentMetadata = { type: 'body', metatype: UpdatePetDto, data: undefined };

    beforeEach(() => (validations = jest.spyOn(ValidationPipe.prototype, 'transform')));
    afterEach(() => validations.mockRestore());

    it.each([
      [BODY, { name: 'Rex', categoryId: 7 }],
      [BODY, { name: 'Rex', categoryId: 7, status: 'sold' }],
      [patch, { name: 'Rex' }],
      [patch, { status: null }],
      [patch, {}],
    ])(
      'gives a body every rule passes the DTO ValidationPipe would, without it: %#',
      async (metadata, body) => {
        const quick = await run({ ...body }, metadata);
        expect(validations).not.toHaveBeenCalled();

        const judged: unknown = await full.transform({ ...body }, metadata);
        expect(Object.getPrototypeOf(quick)).toBe(metadata.metatype!.prototype);
        expect(quick).toEqual(judged);
      },
    );

    it.each([
      [BODY, { name: '', categoryId: 1 }],
      [BODY, { name: 'a\u0000', categoryId: 1 }],
      [BODY, { name: ['a'], categoryId: 1 }],
      [BODY, { name: 'a', categoryId: 1.5 }],
      [BODY, { name: 'a', categoryId: '1' }],
      [BODY, { name: 'a', categoryId: 0 }],
      [BODY, { name: 'a', categoryId: 1, status: null }],
      [BODY, { name: 'a', categoryId: 1, status: 'lost' }],
      [BODY, { categoryId: 1 }],
      [patch, { name: null }],
      [patch, { categoryId: null }],
      [patch, { status: 'lost' }],
    ])(
      'leaves a body a rule refuses to ValidationPipe, which words the refusal: %#',
      async (metadata, body) => {
        const refused = await run({ ...body }, metadata).catch((error: unknown) => error);
        expect(validations).toHaveBeenCalledTimes(1);
        expect(refused).toBeInstanceOf(ApiException);
      },
    );

    it('leaves a DTO with a class-transformer rule to ValidationPipe', async () => {
      class Trimmed {
        @Transform(({ value }: { value: string }) => value.trim())
        @IsString()
        name!: string;
      }
      const trimmed = await run({ name: ' Rex ' }, { type: 'body', metatype: Trimmed, data: undefined });
      expect(validations).toHaveBeenCalledTimes(1);
      expect(trimmed).toEqual({ name: 'Rex' });
    });
  });

  describe('remembered valid queries', () => {
    let pipe: RequestValidationPipe;
    let validations: jest.SpyInstance;

    beforeEach(() => {
      pipe = new RequestValidationPipe();
      validations = jest.spyOn(ValidationPipe.prototype, 'transform');
    });

    afterEach(() => validations.mockRestore());

    const transform = (value: Record<string, unknown>) =>
      Promise.resolve().then(() => pipe.transform(value, QUERY)) as Promise<ListPetsQueryDto>;

    it('validates a repeated query once and gives every caller its own equal DTO', async () => {
      const first = await transform({ status: 'sold', limit: '5' });
      const second = await transform({ status: 'sold', limit: '5' });

      expect(validations).toHaveBeenCalledTimes(1);
      expect(second).toBeInstanceOf(ListPetsQueryDto);
      expect({ ...second }).toEqual({ limit: 5, status: 'sold' });
      expect(second).not.toBe(first);
      first.limit = 99;
      expect((await transform({ status: 'sold', limit: '5' })).limit).toBe(5);
    });

    it('validates a refused query every time', async () => {
      await expect(transform({ limit: '0' })).rejects.toBeInstanceOf(ApiException);
      await expect(transform({ limit: '0' })).rejects.toBeInstanceOf(ApiException);

      expect(validations).toHaveBeenCalledTimes(2);
    });

    it('tells apart queries that differ in any value', async () => {
      expect({ ...(await transform({ limit: '5' })) }).toEqual({ limit: 5 });
      expect({ ...(await transform({ limit: '6' })) }).toEqual({ limit: 6 });
      await expect(transform({ limit: ['5'] })).rejects.toBeInstanceOf(ApiException);
      await expect(transform({ limit: '5', status: 'lost' })).rejects.toBeInstanceOf(ApiException);

      expect(validations).toHaveBeenCalledTimes(4);
    });

    it(`remembers at most ${MAX_REMEMBERED_QUERIES} queries, forgetting the least recently used first`, async () => {
      for (let i = 0; i < MAX_REMEMBERED_QUERIES; i++) await transform({ limit: '5', page: String(i) });
      await transform({ limit: '5', page: '0' });
      await transform({ limit: '5', page: String(MAX_REMEMBERED_QUERIES) });
      expect(validations).toHaveBeenCalledTimes(MAX_REMEMBERED_QUERIES + 1);

      await transform({ limit: '5', page: '0' });
      await transform({ limit: '5', page: String(MAX_REMEMBERED_QUERIES) });
      expect(validations).toHaveBeenCalledTimes(MAX_REMEMBERED_QUERIES + 1);
      await transform({ limit: '5', page: '1' });
      expect(validations).toHaveBeenCalledTimes(MAX_REMEMBERED_QUERIES + 2);
    });
  });
});
