import { Controller, ExecutionContext, Get, Patch, Post } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { createHash } from 'node:crypto';
import type { Request } from 'express';
import { ApiException } from '../common/errors/api-exception';
import { REALM } from '../common/errors/bearer-challenge';
import { hitsOf } from '../../test/support/counters';
import { AbuseLimiter } from '../rate-limit/abuse-limiter';
import { MemoryCounters, ResilientCounters, SHARED_STORE_RETRY_MS } from '../rate-limit/counters';
import { ApiKeyGuard, ScopeGuard } from './api-key.guard';
import { ApiKeyStore } from './api-key.store';
import { ApiKeysService, Refusal, Scopes, VerifiedKey } from './api-keys.service';
import { EVERY_SCOPE, RequiredScope } from '../common/scopes';
import { callerOf } from './caller';
import { Public } from './public.decorator';

const KEY = 'pet_valid-key-0123456789abcdef';
const OTHER_KEY = 'other+key/0123456789abcdef==';
const STORED_KEY = 'pet_stored-key-0123456789abcdef';

const sha256Hex = (value: string) => createHash('sha256').update(value).digest('hex');

type FakeStoredKeys = {
  verifyDigest: jest.Mock<Promise<VerifiedKey | Refusal>, [string]>;
  isKnown: jest.Mock<boolean, [string]>;
};

const verified = (scopes: Scopes = EVERY_SCOPE): VerifiedKey => ({
  id: 1,
  name: 'client',
  scopes,
  until: Infinity,
});

/** A stand-in for ApiKeysService that knows the given stored keys (by digest, as the service does). */
function fakeStoredKeys(...keys: string[]): FakeStoredKeys {
  const digests = keys.map(sha256Hex);
  return {
    verifyDigest: jest.fn((digest: string) =>
      Promise.resolve(digests.includes(digest) ? verified() : 'unknown'),
    ),
    isKnown: jest.fn((_digest: string) => false),
  };
}

function guardWith(configured: string[], stored: FakeStoredKeys, abuse?: AbuseLimiter): ApiKeyGuard {
  return new ApiKeyGuard(
    new Reflector(),
    new ApiKeyStore(configured),
    stored as unknown as ApiKeysService,
    undefined,
    abuse,
  );
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
  return contextOf(requestFor(authorization), controller, handler);
}

function requestFor(authorization: string | undefined, ip = '192.0.2.1'): Request {
  return { headers: authorization === undefined ? {} : { authorization }, ip } as unknown as Request;
}

function contextOf(
  request: Request,
  controller: new () => object = ProtectedController,
  handler = 'handler',
): ExecutionContext {
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
    expect(storedKeys.verifyDigest).not.toHaveBeenCalled();
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

  it('tells apart controllers that inherit one handler, only one of them @Public()', async () => {
    class BaseController {
      @Get()
      handler(): void {}
    }
    @Public()
    @Controller('open')
    class OpenController extends BaseController {}
    @Controller('closed')
    class ClosedController extends BaseController {}

    await expect(guard.canActivate(contextFor(undefined, OpenController))).resolves.toBe(true);
    expect(describeError(await rejection(guard, contextFor(undefined, ClosedController)))).toEqual(MISSING);
    await expect(guard.canActivate(contextFor(undefined, OpenController))).resolves.toBe(true);
  });

  it('does not check keys on @Public() routes', async () => {
    const keys = new ApiKeyStore([KEY]);
    const ownerOf = jest.spyOn(keys, 'ownerOf');
    const publicGuard = new ApiKeyGuard(new Reflector(), keys, storedKeys as unknown as ApiKeysService);

    await expect(
      publicGuard.canActivate(contextFor('Bearer wrong-key-0123456789', PublicController)),
    ).resolves.toBe(true);
    expect(ownerOf).not.toHaveBeenCalled();
    expect(storedKeys.verifyDigest).not.toHaveBeenCalled();
  });

  describe('with stored keys', () => {
    it('does not look up stored keys when an API_KEYS key matches', async () => {
      await expect(guard.canActivate(contextFor(`Bearer ${KEY}`))).resolves.toBe(true);
      await expect(guard.canActivate(contextFor(`bearer ${OTHER_KEY}`))).resolves.toBe(true);
      expect(storedKeys.verifyDigest).not.toHaveBeenCalled();
    });

    it('lets a stored key that verifies through', async () => {
      await expect(guard.canActivate(contextFor(`Bearer ${STORED_KEY}`))).resolves.toBe(true);
      expect(storedKeys.verifyDigest).toHaveBeenCalledTimes(1);
      expect(storedKeys.verifyDigest).toHaveBeenCalledWith(sha256Hex(STORED_KEY));
    });

    it('asks the stored keys about any other well-formed token, and refuses it when they say no', async () => {
      const presented = 'wrong-key-0123456789abcdef';

      expect(describeError(await rejection(guard, contextFor(`Bearer ${presented}`)))).toEqual(INVALID);
      expect(storedKeys.verifyDigest).toHaveBeenCalledTimes(1);
      expect(storedKeys.verifyDigest).toHaveBeenCalledWith(sha256Hex(presented));
    });

    it.each([
      ['a scheme without a token', 'Bearer'],
      ['two tokens', `Bearer ${STORED_KEY} ${STORED_KEY}`],
      ['a token with a forbidden character', `Bearer ${STORED_KEY}!`],
    ])('does not look up %s', async (_label, header) => {
      expect(describeError(await rejection(guard, contextFor(header)))).toEqual(INVALID);
      expect(storedKeys.verifyDigest).not.toHaveBeenCalled();
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
      storedKeys.verifyDigest.mockRejectedValueOnce(new Error('SQLITE_BUSY'));

      await expect(guard.canActivate(contextFor(`Bearer ${STORED_KEY}`))).rejects.toThrow('SQLITE_BUSY');
    });
  });

  it('records the caller as the digest of its key, never the key itself', async () => {
    const request = requestFor(`Bearer ${STORED_KEY}`);

    await expect(guard.canActivate(contextOf(request))).resolves.toBe(true);

    expect(callerOf(request)).toEqual({
      owner: sha256Hex(STORED_KEY),
      keyId: 1,
      keyName: 'client',
      scopes: EVERY_SCOPE,
      operation: 'handler',
    });
  });

  describe('with an abuse budget of 3 per address', () => {
    let abuse: AbuseLimiter;

    beforeEach(() => {
      abuse = new AbuseLimiter(new MemoryCounters(), 3);
      guard = guardWith([KEY], storedKeys, abuse);
    });

    const attempt = (header: string | undefined, ip = '192.0.2.1') =>
      guard.canActivate(contextOf(requestFor(header, ip))).catch((error: ApiException) => error);

    it('refuses the request after three without a valid key with 429, without a lookup', async () => {
      for (const header of [undefined, 'Bearer wrong-key-0123456789abcdef', 'Basic abc']) {
        expect(((await attempt(header)) as ApiException).getStatus()).toBe(401);
      }
      storedKeys.verifyDigest.mockClear();

      const refused = (await attempt('Bearer another-wrong-key-0123456789')) as ApiException;

      expect(describeError(refused)).toEqual({
        code: 'rate_limited',
        status: 429,
        message: expect.stringMatching(
          /^Too many requests without a valid API key from this address\. Retry after \d+ seconds\.$/,
        ),
        details: undefined,
        headers: { 'Retry-After': expect.stringMatching(/^(60|[1-5]?[0-9])$/) },
      });
      expect(storedKeys.verifyDigest).not.toHaveBeenCalled();
      expect(((await attempt(undefined)) as ApiException).getStatus()).toBe(429);
    });

    it('still lets valid keys through from the address that spent its budget', async () => {
      for (let i = 0; i < 4; i++) await attempt('Bearer wrong-key-0123456789abcdef');

      await expect(attempt(`Bearer ${KEY}`)).resolves.toBe(true);
      storedKeys.isKnown.mockReturnValue(true);
      await expect(attempt(`Bearer ${STORED_KEY}`)).resolves.toBe(true);
    });

    it('holds back a stored key this instance has not seen valid lately, like any unknown key', async () => {
      for (let i = 0; i < 3; i++) await attempt('Bearer wrong-key-0123456789abcdef');

      expect(((await attempt(`Bearer ${STORED_KEY}`)) as ApiException).getStatus()).toBe(429);
    });

    it('counts per address: another address has its own budget', async () => {
      for (let i = 0; i < 4; i++) await attempt('Bearer wrong-key-0123456789abcdef', '192.0.2.1');

      expect(
        ((await attempt('Bearer wrong-key-0123456789abcdef', '192.0.2.2')) as ApiException).getStatus(),
      ).toBe(401);
    });

    it('does not count requests with a valid key', async () => {
      for (let i = 0; i < 10; i++) await attempt(`Bearer ${KEY}`);

      expect(((await attempt(undefined)) as ApiException).getStatus()).toBe(401);
    });
  });

  describe('with the abuse budget in a shared store that goes down or comes back during a lookup', () => {
    let now: number;
    let shared: MemoryCounters;
    let local: MemoryCounters;
    let counters: ResilientCounters;

    beforeEach(() => {
      now = 1_000_000;
      shared = new MemoryCounters();
      local = new MemoryCounters();
      counters = new ResilientCounters(shared, { warn: jest.fn(), log: jest.fn() }, 250, local, () => now);
      guard = guardWith([KEY], storedKeys, new AbuseLimiter(counters, 3));
    });

    /** A valid stored key; `meanwhile` runs during its lookup, as another request would. */
    const validKey = async (meanwhile: () => unknown) => {
      storedKeys.verifyDigest.mockImplementationOnce(async () => {
        await meanwhile();
        return verified();
      });
      await expect(guard.canActivate(contextFor(`Bearer ${STORED_KEY}`))).resolves.toBe(true);
      const spent = (store: MemoryCounters) => hitsOf(store, 'petstore:abuse:192.0.2.1');
      return { shared: await spent(shared), local: await spent(local) };
    };

    it('gives the unit back to the shared store that took it, though it was found down meanwhile', async () => {
      await expect(validKey(() => counters.markDown('Connection is closed.'))).resolves.toEqual({
        shared: 0,
        local: 0,
      });
    });

    it('gives the unit back to this instance that took it, though the shared store answered again meanwhile', async () => {
      counters.markDown('Connection is closed.');
      const recovered = async () => {
        now += SHARED_STORE_RETRY_MS;
        await counters.increment('petstore:abuse:192.0.2.2', 60_000, 3, 0, 'abuse');
      };
      await expect(validKey(recovered)).resolves.toEqual({ shared: 0, local: 0 });
    });
  });

  describe('scopes', () => {
    @Controller('widgets')
    class WidgetsController {
      @Get()
      list(): void {}

      @Post()
      add(): void {}

      @Patch(':id')
      change(): void {}

      @RequiredScope('keys:manage')
      @Post('special')
      special(): void {}
    }

    /** The key guard and the scope guard on one request, in the order Nest runs them. */
    const withScopes = (...scopes: string[]) => {
      const stored = fakeStoredKeys();
      stored.verifyDigest.mockResolvedValue(verified(new Set(scopes)));
      const keys = guardWith([KEY], stored);
      return { keys, scope: new ScopeGuard(keys) };
    };
    const call = async (guards: ReturnType<typeof withScopes>, handler: string, key = STORED_KEY) => {
      const context = contextFor(`Bearer ${key}`, WidgetsController, handler);
      return (await guards.keys.canActivate(context)) && guards.scope.canActivate(context);
    };
    const refusal = async (guards: ReturnType<typeof withScopes>, handler: string) => {
      const error = await call(guards, handler).catch((failure: unknown) => failure);
      expect(error).toBeInstanceOf(ApiException);
      return describeError(error as ApiException);
    };

    it("lets a key with the collection's read scope read, and nothing else", async () => {
      const guards = withScopes('widgets:read');

      await expect(call(guards, 'list')).resolves.toBe(true);
      for (const handler of ['add', 'change'])
        expect(await refusal(guards, handler)).toEqual({
          code: 'insufficient_scope',
          status: 403,
          message: 'The API key lacks the scope widgets:write, which this operation needs.',
          details: undefined,
          headers: {
            'WWW-Authenticate': `Bearer realm="${REALM}", error="insufficient_scope", scope="widgets:write"`,
          },
        });
    });

    it('leaves the scope to the scope guard, which runs after the rate limit: the key guard lets a valid key through', async () => {
      const guards = withScopes();
      const context = contextFor(`Bearer ${STORED_KEY}`, WidgetsController, 'add');

      await expect(guards.keys.canActivate(context)).resolves.toBe(true);
      expect(callerOf(context.switchToHttp().getRequest<Request>())).toMatchObject({ keyId: 1 });
      expect(() => guards.scope.canActivate(context)).toThrow(ApiException);
    });

    it('asks a route for the scope it names, whatever its method', async () => {
      await expect(call(withScopes('widgets:write', 'keys:manage'), 'special')).resolves.toBe(true);
      expect((await refusal(withScopes('widgets:write'), 'special')).headers).toEqual({
        'WWW-Authenticate': `Bearer realm="${REALM}", error="insufficient_scope", scope="keys:manage"`,
      });
    });

    it('gives API_KEYS entries every scope', async () => {
      const guards = withScopes();
      for (const handler of ['list', 'add', 'change', 'special'])
        await expect(call(guards, handler, KEY)).resolves.toBe(true);
    });

    it('answers an expired key 401 with the RFC 6750 description', async () => {
      const stored = fakeStoredKeys();
      stored.verifyDigest.mockResolvedValue('expired');
      const error = await rejection(guardWith([], stored), contextFor(`Bearer ${STORED_KEY}`));

      expect(describeError(error)).toMatchObject({
        code: 'unauthorized',
        status: 401,
        message: 'The API key has expired.',
        headers: {
          'WWW-Authenticate': `Bearer realm="${REALM}", error="invalid_token", error_description="The access token expired"`,
        },
      });
    });
  });
});
