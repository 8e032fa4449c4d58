import { Controller, ExecutionContext, Get } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApiKeysService, StoredKeyCheck } from '../../api-keys/api-keys.service';
import { ApiException } from '../errors/api-exception';
import { ApiKeyGuard, REALM } from './api-key.guard';
import { ApiKeyStore } from './api-key.store';
import { Public } from './public.decorator';

const KEY = 'pet_valid-key-0123456789abcdef';
const OTHER_KEY = 'other+key/0123456789abcdef==';
const STORED_KEY = 'pet_stored-key-0123456789abcdef';

type FakeStoredKeys = { check: jest.Mock<Promise<StoredKeyCheck>, [string]> };

/** A stand-in for ApiKeysService that knows the given stored keys. */
function fakeStoredKeys(...keys: string[]): FakeStoredKeys {
  return { check: jest.fn((token: string) => Promise.resolve(keys.includes(token) ? 'valid' : 'unknown')) };
}

function guardWith(configured: string[], stored: FakeStoredKeys): ApiKeyGuard {
  return new ApiKeyGuard(new Reflector(), new ApiKeyStore(configured), stored as unknown as ApiKeysService);
}

@Controller()
class ProtectedController {
  @Get()
  handler(): void {}

  @Public()
  @Get('open')
  openHandler(): void {}
}

@Public()
@Controller()
class PublicController {
  @Get()
  handler(): void {}
}

function contextFor(
  authorization: string | undefined,
  controller: new () => object = ProtectedController,
  handler = 'handler',
): ExecutionContext {
  const request = { headers: authorization === undefined ? {} : { authorization } };
  return {
    getHandler: () => (controller.prototype as Record<string, unknown>)[handler],
    getClass: () => controller,
    switchToHttp: () => ({ getRequest: () => request }),
  } as unknown as ExecutionContext;
}

async function rejection(guard: ApiKeyGuard, context: ExecutionContext): Promise<ApiException> {
  const result = guard.canActivate(context);
  await expect(result).rejects.toBeInstanceOf(ApiException);
  return (await result.catch((error: unknown) => error)) as ApiException;
}

function describeError(error: ApiException) {
  return {
    code: error.code,
    status: error.getStatus(),
    message: error.message,
    details: error.details,
    headers: error.headers,
  };
}

const MISSING = {
  code: 'unauthorized',
  status: 401,
  message: 'An API key is required: send Authorization: Bearer <key>.',
  details: undefined,
  headers: { 'WWW-Authenticate': 'Bearer realm="petstore"' },
};

const INVALID = {
  code: 'unauthorized',
  status: 401,
  message: 'The API key is not valid.',
  details: undefined,
  headers: { 'WWW-Authenticate': 'Bearer realm="petstore", error="invalid_token"' },
};

describe('ApiKeyGuard', () => {
  let storedKeys: FakeStoredKeys;
  let guard: ApiKeyGuard;

  beforeEach(() => {
    storedKeys = fakeStoredKeys(STORED_KEY);
    guard = guardWith([KEY, OTHER_KEY], storedKeys);
  });

  it('uses the petstore realm', () => {
    expect(REALM).toBe('petstore');
  });

  it.each([
    ['Bearer', `Bearer ${KEY}`],
    ['bearer', `bearer ${KEY}`],
    ['BEARER', `BEARER ${KEY}`],
    ['bEaReR', `bEaReR ${KEY}`],
    ['several spaces', `Bearer   ${KEY}`],
    ['a trailing space', `Bearer ${KEY} `],
    ['the second key with padding', `Bearer ${OTHER_KEY}`],
  ])('lets a valid key through (%s)', async (_label, header) => {
    await expect(guard.canActivate(contextFor(header))).resolves.toBe(true);
  });

  it.each([
    ['no Authorization header', undefined],
    ['an empty header', ''],
    ['the Basic scheme', 'Basic dXNlcjpwYXNzd29yZA=='],
    ['the Token scheme', `Token ${KEY}`],
    ['a bare key', KEY],
    ['a scheme glued to the key', `Bearer${KEY}`],
  ])('answers 401 with the realm only for %s', async (_label, header) => {
    expect(describeError(await rejection(guard, contextFor(header)))).toEqual(MISSING);
    expect(storedKeys.check).not.toHaveBeenCalled();
  });

  it.each([
    ['a wrong key', 'Bearer wrong-key-0123456789abcdef'],
    ['a wrong key, lower-case scheme', 'bearer wrong-key-0123456789abcdef'],
    ['the right key in another case', `Bearer ${KEY.toUpperCase()}`],
    ['a truncated key', `Bearer ${KEY.slice(0, -1)}`],
    ['a scheme without a token', 'Bearer'],
    ['a scheme and spaces only', 'Bearer   '],
    ['two tokens', `Bearer ${KEY} ${KEY}`],
    ['a token with a forbidden character', `Bearer ${KEY}!`],
  ])('answers 401 invalid_token for %s', async (_label, header) => {
    expect(describeError(await rejection(guard, contextFor(header)))).toEqual(INVALID);
  });

  it('never echoes the presented key', async () => {
    const presented = 'wrong-key-0123456789abcdef';
    const error = await rejection(guard, contextFor(`Bearer ${presented}`));

    expect(JSON.stringify({ ...describeError(error), response: error.getResponse() })).not.toContain(
      presented,
    );
  });

  it('lets a request without a key reach a @Public() route', async () => {
    await expect(guard.canActivate(contextFor(undefined, ProtectedController, 'openHandler'))).resolves.toBe(
      true,
    );
  });

  it('lets a request without a key reach any route of a @Public() controller', async () => {
    await expect(guard.canActivate(contextFor('Basic abc', PublicController))).resolves.toBe(true);
  });

  it('does not check keys on @Public() routes', async () => {
    const keys = new ApiKeyStore([KEY]);
    const isValid = jest.spyOn(keys, 'isValid');
    const publicGuard = new ApiKeyGuard(new Reflector(), keys, storedKeys as unknown as ApiKeysService);

    await expect(
      publicGuard.canActivate(contextFor('Bearer wrong-key-0123456789', PublicController)),
    ).resolves.toBe(true);
    expect(isValid).not.toHaveBeenCalled();
    expect(storedKeys.check).not.toHaveBeenCalled();
  });

  describe('with stored keys', () => {
    it('does not look up stored keys when an API_KEYS key matches', async () => {
      await expect(guard.canActivate(contextFor(`Bearer ${KEY}`))).resolves.toBe(true);
      await expect(guard.canActivate(contextFor(`bearer ${OTHER_KEY}`))).resolves.toBe(true);
      expect(storedKeys.check).not.toHaveBeenCalled();
    });

    it('lets a stored key that verifies through', async () => {
      await expect(guard.canActivate(contextFor(`Bearer ${STORED_KEY}`))).resolves.toBe(true);
      expect(storedKeys.check).toHaveBeenCalledTimes(1);
      expect(storedKeys.check).toHaveBeenCalledWith(STORED_KEY);
    });

    it('asks the stored keys about any other well-formed token, and refuses it when they say no', async () => {
      const presented = 'wrong-key-0123456789abcdef';

      expect(describeError(await rejection(guard, contextFor(`Bearer ${presented}`)))).toEqual(INVALID);
      expect(storedKeys.check).toHaveBeenCalledTimes(1);
      expect(storedKeys.check).toHaveBeenCalledWith(presented);
    });

    it.each([
      ['a scheme without a token', 'Bearer'],
      ['two tokens', `Bearer ${STORED_KEY} ${STORED_KEY}`],
      ['a token with a forbidden character', `Bearer ${STORED_KEY}!`],
    ])('does not look up %s', async (_label, header) => {
      expect(describeError(await rejection(guard, contextFor(header)))).toEqual(INVALID);
      expect(storedKeys.check).not.toHaveBeenCalled();
    });

    it('accepts stored keys when API_KEYS is empty', async () => {
      const storedOnly = guardWith([], storedKeys);

      await expect(storedOnly.canActivate(contextFor(`Bearer ${STORED_KEY}`))).resolves.toBe(true);
      expect(describeError(await rejection(storedOnly, contextFor(`Bearer ${KEY}`)))).toEqual(INVALID);
    });

    it('refuses every key when neither API_KEYS nor the stored keys know it', async () => {
      const emptyGuard = guardWith([], fakeStoredKeys());

      expect(describeError(await rejection(emptyGuard, contextFor(`Bearer ${KEY}`)))).toEqual(INVALID);
      expect(describeError(await rejection(emptyGuard, contextFor(`Bearer ${STORED_KEY}`)))).toEqual(INVALID);
    });

    it('passes a failure of the stored-key lookup on instead of letting the request through', async () => {
      storedKeys.check.mockRejectedValueOnce(new Error('SQLITE_BUSY'));

      await expect(guard.canActivate(contextFor(`Bearer ${STORED_KEY}`))).rejects.toThrow('SQLITE_BUSY');
    });
  });
});
