import { Webhook } from 'standardwebhooks';
import { newSigningSecret, signatureHeaders } from './signature';

/** Verified with the official Standard Webhooks library, as a receiver would. */
describe('signatureHeaders', () => {
  const body = JSON.stringify({ id: 'evt_0000000000000001', type: 'pet.created', data: { id: 1 } });
  const now = Math.floor(Date.now() / 1000);

  it('makes secrets of the whsec_ form with 32 random bytes', () => {
    const secret = newSigningSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
    expect(newSigningSecret()).not.toBe(secret);
  });

  it('signs what the standardwebhooks library verifies, and nothing tampered with', () => {
    const secret = newSigningSecret();
    const headers = signatureHeaders([secret], 'evt_0000000000000001', now, body);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(secret).verify(body.replace('"id":1', '"id":2'), headers)).toThrow();
    expect(() =>
      new Webhook(secret).verify(body, { ...headers, 'webhook-timestamp': String(now + 1) }),
    ).toThrow();
    expect(() => new Webhook(newSigningSecret()).verify(body, headers)).toThrow();
  });

  it('is refused once its timestamp is more than 5 minutes old', () => {
    const secret = newSigningSecret();
    const old = signatureHeaders([secret], 'evt_0000000000000001', now - 301, body);
    expect(() => new Webhook(secret).verify(body, old)).toThrow(/timestamp/i);
  });

  it('carries one signature per secret while one rotates out: either verifies', () => {
    const [current, previous] = [newSigningSecret(), newSigningSecret()];
    const headers = signatureHeaders([current, previous], 'evt_0000000000000002', now, body);
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    for (const secret of [current, previous])
      expect(() => new Webhook(secret).verify(body, headers)).not.toThrow();
  });
});
