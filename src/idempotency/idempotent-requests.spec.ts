import { Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { setCaller } from '../auth/caller';
import { ApiException } from '../common/errors/api-exception';
import type { Claim, ClaimedKey, IdempotencyService, StoredResponse } from './idempotency.service';
import type { Transactions } from '../database/transactions';
import { IdempotentRequests, requestDigest } from './idempotent-requests';

/** `run` alone: the creates that use transactions are proved end to end (test/idempotency.e2e-spec.ts). */
const NO_TRANSACTIONS = {} as Transactions;

// A failing store is warned about; these specs fail it on purpose.
beforeAll(() => Logger.overrideLogger(false));

/** Records what the service was asked; `claim` answers what the test says. */
type FakeClaim = Claim | Error | 'new';

function fakeService(claim: FakeClaim = 'new', storeFails?: 'complete' | 'release') {
  const calls: string[] = [];
  const completed: StoredResponse[] = [];
  const service = {
    claim: (owner: string, key: string, digest: string) => {
      calls.push(`claim ${key} ${digest === requestDigest({ name: 'Rex' }) ? 'digest-ok' : 'digest-wrong'}`);
      if (claim instanceof Error) return Promise.reject(claim);
      return Promise.resolve(
        claim === 'new' ? { kind: 'new', claimed: { owner, idempotencyKey: key, createdAt: 1 } } : claim,
      );
    },
    complete: ({ idempotencyKey: key }: ClaimedKey, response: StoredResponse, manager?: unknown) => {
      calls.push(`complete ${key}${manager ? ' in transaction' : ''}`);
      completed.push(response);
      return storeFails === 'complete' ? Promise.reject(new Error('disk I/O error')) : Promise.resolve();
    },
    release: ({ idempotencyKey: key }: ClaimedKey) => {
      calls.push(`release ${key}`);
      return storeFails === 'release' ? Promise.reject(new Error('disk I/O error')) : Promise.resolve();
    },
  };
  return { service: service as unknown as IdempotencyService, calls, completed };
}

function exchange(headers: Record<string, string>) {
  const request = {
    headers: { authorization: 'Bearer key-0123456789abcdef', ...headers },
    body: { name: 'Rex' },
  } as unknown as Request;
  // What the authentication guard records before the handler runs.
  setCaller(request, { owner: 'owner-digest', scopes: '*', operation: 'createPet' });
  const sent: Record<string, string> = {};
  const response = {
    statusCode: 201,
    status(this: { statusCode: number }, code: number) {
      this.statusCode = code;
      return this;
    },
    setHeader(name: string, value: string) {
      sent[name.toLowerCase()] = value;
      return this;
    },
    getHeader: (name: string) => sent[name.toLowerCase()],
    location(url: string) {
      sent.location = url;
      return this;
    },
  } as unknown as Response;
  return { request, response, sent };
}

describe('IdempotentRequests.run', () => {
  it('without the header only runs the operation', async () => {
    const { service, calls } = fakeService();
    const { request, response } = exchange({});
    await expect(
      new IdempotentRequests(service, NO_TRANSACTIONS).run(request, response, () => Promise.resolve('made')),
    ).resolves.toBe('made');
    expect(calls).toEqual([]);
  });

  it("stores the response inside the operation's transaction when the operation offers one", async () => {
    const { service, calls, completed } = fakeService();
    const { request, response } = exchange({ 'idempotency-key': 'k6' });
    const manager = { transaction: 'of the create' };

    const body = await new IdempotentRequests(service, NO_TRANSACTIONS).run(
      request,
      response,
      async (record) => {
        await record!({ manager } as never, { statusCode: 201, body: { id: 8 }, location: '/v1/pets/8' });
        return { id: 8 };
      },
    );

    expect(body).toEqual({ id: 8 });
    expect(calls).toEqual(['claim k6 digest-ok', 'complete k6 in transaction']);
    expect(completed).toEqual([{ statusCode: 201, body: { id: 8 }, location: '/v1/pets/8' }]);
  });

  it('offers no record function to a request without the header', async () => {
    const { service } = fakeService();
    const { request, response } = exchange({});
    const operation = jest.fn(() => Promise.resolve('made'));
    await new IdempotentRequests(service, NO_TRANSACTIONS).run(request, response, operation);
    expect(operation).toHaveBeenCalledWith();
  });

  it('answers a replay from the stored response without running the operation', async () => {
    const stored: StoredResponse = { statusCode: 200, body: { id: 3 }, location: '/v1/pets/3' };
    const { service } = fakeService({ kind: 'replay', response: stored });
    const { request, response, sent } = exchange({ 'idempotency-key': '"quoted key"' });
    const operation = jest.fn();
    await expect(
      new IdempotentRequests(service, NO_TRANSACTIONS).run(request, response, operation),
    ).resolves.toEqual({
      id: 3,
    });
    expect(operation).not.toHaveBeenCalled();
    expect(sent).toEqual({ 'idempotent-replayed': 'true', location: '/v1/pets/3' });
    expect(response.statusCode).toBe(200);
  });

  it("passes the operation's error on even when the key cannot be released", async () => {
    const { service, calls } = fakeService('new', 'release');
    const { request, response } = exchange({ 'idempotency-key': 'k5' });
    const failure = new ApiException('service_unavailable');
    await expect(
      new IdempotentRequests(service, NO_TRANSACTIONS).run(request, response, () => Promise.reject(failure)),
    ).rejects.toBe(failure);
    expect(calls).toEqual(['claim k5 digest-ok', 'release k5']);
  });

  it('releases the key when the operation fails, and passes the error on', async () => {
    const { service, calls } = fakeService();
    const { request, response } = exchange({ 'idempotency-key': 'k2' });
    const failure = new Error('database is locked');
    await expect(
      new IdempotentRequests(service, NO_TRANSACTIONS).run(request, response, () => Promise.reject(failure)),
    ).rejects.toBe(failure);
    expect(calls).toEqual(['claim k2 digest-ok', 'release k2']);
  });

  it('refuses a malformed key before claiming anything', async () => {
    const { service, calls } = fakeService();
    const { request, response } = exchange({ 'idempotency-key': 'has space' });
    await expect(
      new IdempotentRequests(service, NO_TRANSACTIONS).run(request, response, () => Promise.resolve('made')),
    ).rejects.toBeInstanceOf(ApiException);
    expect(calls).toEqual([]);
  });

  it('passes a conflict from the store on without running the operation', async () => {
    const { service } = fakeService(new ApiException('idempotency_conflict'));
    const { request, response } = exchange({ 'idempotency-key': 'k3' });
    const operation = jest.fn();
    await expect(
      new IdempotentRequests(service, NO_TRANSACTIONS).run(request, response, operation),
    ).rejects.toMatchObject({
      code: 'idempotency_conflict',
    });
    expect(operation).not.toHaveBeenCalled();
  });
});
