import { createHmac, randomBytes } from 'node:crypto';

const PREFIX = 'whsec_';

/** `whsec_` and base64 of 32 random bytes: the form Standard Webhooks libraries take. */
export function newSigningSecret(): string {
  return `${PREFIX}${randomBytes(32).toString('base64')}`;
}

/** Standard Webhooks' headers: a `v1,` HMAC-SHA256 of `id.timestamp.body` per secret (two while one rotates out). */
export function signatureHeaders(
  secrets: readonly string[],
  id: string,
  timestampSeconds: number,
  body: string,
): Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string> {
  const signed = `${id}.${timestampSeconds}.${body}`;
  const sign = (secret: string) =>
    createHmac('sha256', Buffer.from(secret.slice(PREFIX.length), 'base64'))
      .update(signed)
      .digest('base64');
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': secrets.map((secret) => `v1,${sign(secret)}`).join(' '),
  };
}
