import { Controller, ExecutionContext, Get } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApiException } from '../errors/api-exception';
import { ApiKeyGuard, REALM } from './api-key.guard';
import { ApiKeyStore } from './api-key.store';
import { Public } from './public.decorator';

const KEY = 'pet_valid-key-0123456789abcdef';
const OTHER_KEY = 'other+key/0123456789abcdef==';

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

function rejection(guard: ApiKeyGuard, context: ExecutionContext): ApiException {
  try {
    guard.canActivate(context);
  } catch (error) {
    expect(error).toBeInstanceOf(ApiException);
    return error as ApiException;
  }
  throw new Error('the guard let the request through');
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
  let guard: ApiKeyGuard;

  beforeEach(() => {
    guard = new ApiKeyGuard(new Reflector(), new ApiKeyStore([KEY, OTHER_KEY]));
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
  ])('lets a valid key through (%s)', (_label, header) => {
    expect(guard.canActivate(contextFor(header))).toBe(true);
  });

  it.each([
    ['no Authorization header', undefined],
    ['an empty header', ''],
    ['the Basic scheme', 'Basic dXNlcjpwYXNzd29yZA=='],
    ['the Token scheme', `Token ${KEY}`],
    ['a bare key', KEY],
    ['a scheme glued to the key', `Bearer${KEY}`],
  ])('answers 401 with the realm only for %s', (_label, header) => {
    expect(describeError(rejection(guard, contextFor(header)))).toEqual(MISSING);
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
  ])('answers 401 invalid_token for %s', (_label, header) => {
    expect(describeError(rejection(guard, contextFor(header)))).toEqual(INVALID);
  });

  it('never echoes the presented key', () => {
    const presented = 'wrong-key-0123456789abcdef';
    const error = rejection(guard, contextFor(`Bearer ${presented}`));

    expect(JSON.stringify({ ...describeError(error), response: error.getResponse() })).not.toContain(
      presented,
    );
  });

  it('lets a request without a key reach a @Public() route', () => {
    expect(guard.canActivate(contextFor(undefined, ProtectedController, 'openHandler'))).toBe(true);
  });

  it('lets a request without a key reach any route of a @Public() controller', () => {
    expect(guard.canActivate(contextFor('Basic abc', PublicController))).toBe(true);
  });

  it('does not check keys on @Public() routes', () => {
    const keys = new ApiKeyStore([KEY]);
    const isValid = jest.spyOn(keys, 'isValid');
    const publicGuard = new ApiKeyGuard(new Reflector(), keys);

    expect(publicGuard.canActivate(contextFor('Bearer wrong-key-0123456789', PublicController))).toBe(true);
    expect(isValid).not.toHaveBeenCalled();
  });

  it('refuses every key when the store is empty', () => {
    const emptyGuard = new ApiKeyGuard(new Reflector(), new ApiKeyStore([]));

    expect(describeError(rejection(emptyGuard, contextFor(`Bearer ${KEY}`)))).toEqual(INVALID);
  });
});
