// The token provider, against a real HTTP server on loopback that records what each request
// carries. Runs on the built package, as a user's code loads it: npm test -w @petstore/client
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import test from 'node:test';
import { createPetStoreClient, PetStoreConnectionError } from '@petstore/client';

/** A server answering `[]` to every request, after the statuses queued in `failures`. */
async function listening() {
  /** @type {string[]} The `Authorization` header of each request, in order. */
  const received = [];
  /** @type {number[]} */
  const failures = [];
  const server = createServer((request, response) => {
    received.push(request.headers.authorization ?? '(none)');
    const status = failures.shift() ?? 200;
    response.writeHead(status, { 'Content-Type': 'application/json', 'Retry-After': '0' });
    response.end(status === 200 ? '[]' : '{"code":"service_unavailable","message":"Restarting."}');
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  const address = server.address();
  assert.ok(address !== null && typeof address === 'object');
  return { server, received, failures, baseUrl: `http://127.0.0.1:${address.port}/v1` };
}

/**
 * A provider answering `values` in turn (the last again once they run out), counting its calls.
 * @param {...unknown} values what it answers: anything, as a JavaScript caller's provider may
 */
function provider(...values) {
  const counted = {
    calls: 0,
    token: () => /** @type {string} */ (values[Math.min(counted.calls++, values.length - 1)]),
  };
  return counted;
}

await test('a token provider', async (t) => {
  const { server, received, failures, baseUrl } = await listening();
  t.after(() => server.close());
  t.beforeEach(() => {
    received.length = 0;
    failures.length = 0;
  });

  await t.test('is asked before each request, and what it answers is the bearer token', async () => {
    const tokens = provider('eyJhbGciOiJFUzI1NiJ9.e30.c2ln', 'A-z0.9_~+/==');
    const client = createPetStoreClient({ baseUrl, token: () => Promise.resolve(tokens.token()) });
    await client.pets.list();
    await client.pets.list({ status: 'sold' });
    assert.equal(tokens.calls, 2);
    assert.deepEqual(received, ['Bearer eyJhbGciOiJFUzI1NiJ9.e30.c2ln', 'Bearer A-z0.9_~+/==']);
  });

  await t.test('is asked again for each retry, whose request carries the new token', async () => {
    failures.push(503, 429);
    const tokens = provider('first', 'second', 'third');
    const client = createPetStoreClient({ baseUrl, token: tokens.token });
    assert.deepEqual(await client.pets.list(), { items: [] });
    assert.deepEqual(received, ['Bearer first', 'Bearer second', 'Bearer third']);
  });

  await t.test(
    'that rejects or throws makes the call reject with its error, sending nothing, once',
    async () => {
      const failure = new Error('identity provider unreachable');
      const rejecting = () => Promise.reject(failure);
      const throwing = () => {
        throw failure;
      };
      for (const token of [rejecting, throwing]) {
        let calls = 0;
        const client = createPetStoreClient({
          baseUrl,
          token: () => {
            calls++;
            return token();
          },
        });
        await assert.rejects(client.pets.list(), (error) => error === failure);
        assert.equal(calls, 1);
      }
      assert.deepEqual(received, []);
    },
  );

  await t.test(
    'that answers no token68 makes the call reject with a TypeError without it, sending nothing',
    async () => {
      for (const value of [
        '',
        'two words',
        'Bearer abc',
        'abc\r\nX-Injected: 1',
        '=abc',
        'ab=c',
        'é',
        42,
        undefined,
      ]) {
        const tokens = provider(value);
        const client = createPetStoreClient({ baseUrl, token: tokens.token });
        await assert.rejects(client.pets.list(), (error) => {
          assert.ok(error instanceof TypeError, `${String(value)}: ${String(error)}`);
          assert.match(error.message, /^The token provider answered /);
          if (typeof value === 'string' && value !== '') assert.ok(!error.message.includes(value));
          return true;
        });
        assert.equal(tokens.calls, 1);
      }
      assert.deepEqual(received, []);
    },
  );

  await t.test('leaves the token out of the error of a request that got no answer', async () => {
    const closed = await listening();
    closed.server.close();
    const tokens = provider('secret-token-value');
    const client = createPetStoreClient({
      baseUrl: closed.baseUrl,
      token: tokens.token,
      retry: { attempts: 2, baseDelayMs: 1 },
    });
    await assert.rejects(client.pets.list(), (error) => {
      assert.ok(error instanceof PetStoreConnectionError);
      assert.ok(!error.message.includes('secret-token-value'));
      return true;
    });
    assert.equal(tokens.calls, 2);
  });

  await t.test('or an API key: exactly one of the two, else a TypeError at once', () => {
    const both = { baseUrl, apiKey: 'pet_key', token: () => 'token' };
    const neither = { baseUrl };
    const notAFunction = { baseUrl, token: 'token' };
    // @ts-expect-error refused by the types; JavaScript callers get the TypeError
    assert.throws(() => createPetStoreClient(both), { name: 'TypeError', message: /not both/ });
    // @ts-expect-error as above
    assert.throws(() => createPetStoreClient(neither), {
      name: 'TypeError',
      message: /needs apiKey or token/,
    });
    // @ts-expect-error as above
    assert.throws(() => createPetStoreClient(notAFunction), {
      name: 'TypeError',
      message: /must be a function/,
    });
  });

  await t.test('is not needed with an API key, which is sent as before', async () => {
    const client = createPetStoreClient({ baseUrl, apiKey: 'pet_key' });
    await client.pets.list();
    await client.pets.list();
    assert.deepEqual(received, ['Bearer pet_key', 'Bearer pet_key']);
  });
});
