import type { components } from './generated/schema.js';

/** A committed change, as `events.list` lists it and a webhook delivers it (`verifyWebhook`). */
export type Event = components['schemas']['Event'];

/**
 * What a change's event holds: the record as the API answered it after the change (its own
 * properties, typed `unknown` here), its `version` (the number in its `ETag`) and, when its status
 * changed, `previousStatus`.
 */
export type EventData = Event['data'];

/** The headers of a delivery: a fetch `Headers`, or a plain object such as Node.js `req.headers`. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export interface VerifyWebhookOptions {
  /** How far `webhook-timestamp` may be from `now`, either way, in seconds (default 300). */
  toleranceSeconds?: number;
  /** The time to check the timestamp against (default: the clock). */
  now?: Date;
}

/** Why a delivery was refused. */
export type WebhookVerificationReason =
  | 'missing_header'
  | 'invalid_timestamp'
  | 'timestamp_too_old'
  | 'timestamp_too_new'
  | 'invalid_secret'
  | 'invalid_signature'
  | 'invalid_body';

/** A delivery that is not proven to come from the service, now: answer it 400 and drop it. */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';

  constructor(
    readonly reason: WebhookVerificationReason,
    message: string,
  ) {
    super(message);
  }
}

const SECRET_PREFIX = 'whsec_';
const DEFAULT_TOLERANCE_SECONDS = 300;

/**
 * Checks a webhook delivery by the Standard Webhooks rules and answers its event: `webhook-id`,
 * `webhook-timestamp` (seconds, within `toleranceSeconds` of now either way, which stops replays)
 * and `webhook-signature`, whose space-separated `v1,<base64>` entries must include one equal
 * (compared in constant time) to the HMAC-SHA256 of `<id>.<timestamp>.<body>` under the secret.
 *
 * `body` must be the raw body, exactly as received: JSON parsed and serialized again will not do.
 * `secret` is the endpoint's `whsec_...`. Any failure throws a WebhookVerificationError.
 * WebCrypto only: Node.js 20.12+, browsers, Deno, Bun, edge runtimes.
 */
export async function verifyWebhook(
  body: string,
  headers: WebhookHeaders,
  secret: string,
  options: VerifyWebhookOptions = {},
): Promise<Event> {
  const { toleranceSeconds = DEFAULT_TOLERANCE_SECONDS, now = new Date() } = options;
  // A NaN here would make every comparison below false, and so let any timestamp through.
  if (!Number.isFinite(toleranceSeconds) || toleranceSeconds < 0)
    throw new RangeError('toleranceSeconds must be a finite number of seconds, 0 or more');
  const nowSeconds = Math.floor(now.getTime() / 1000);
  if (!Number.isFinite(nowSeconds)) throw new RangeError('now must be a valid Date');

  const id = headerOf(headers, 'webhook-id');
  const timestamp = headerOf(headers, 'webhook-timestamp');
  const signatures = headerOf(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures)
    throw new WebhookVerificationError(
      'missing_header',
      'The delivery lacks webhook-id, webhook-timestamp or webhook-signature.',
    );

  if (!/^\d{1,15}$/.test(timestamp))
    throw new WebhookVerificationError('invalid_timestamp', 'webhook-timestamp is not a number of seconds.');
  const sent = Number(timestamp);
  if (nowSeconds - sent > toleranceSeconds)
    throw new WebhookVerificationError(
      'timestamp_too_old',
      `webhook-timestamp is more than ${toleranceSeconds} s old.`,
    );
  if (sent - nowSeconds > toleranceSeconds)
    throw new WebhookVerificationError(
      'timestamp_too_new',
      `webhook-timestamp is more than ${toleranceSeconds} s ahead.`,
    );

  const expected = await sign(keyOf(secret), `${id}.${timestamp}.${body}`);
  const matches = signatures
    .split(' ')
    .some((entry) => entry.startsWith('v1,') && equalInConstantTime(entry.slice(3), expected));
  if (!matches)
    throw new WebhookVerificationError(
      'invalid_signature',
      'No v1 signature of webhook-signature matches the body under this secret.',
    );

  try {
    return JSON.parse(body) as Event;
  } catch {
    throw new WebhookVerificationError('invalid_body', 'The delivery is signed, but its body is not JSON.');
  }
}

/** A header, by its name in any case; repeated values joined with a space. */
function headerOf(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  for (const [key, value] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (key.toLowerCase() === name && value !== undefined)
      return Array.isArray(value) ? value.join(' ') : value;
  }
  return undefined;
}

/** The HMAC key of a `whsec_<base64>` secret (the prefix is optional). */
function keyOf(secret: string): Uint8Array<ArrayBuffer> {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  let decoded: string;
  try {
    decoded = atob(encoded);
  } catch {
    decoded = '';
  }
  if (decoded === '')
    throw new WebhookVerificationError('invalid_secret', 'The secret is not whsec_ and a base64 key.');
  return Uint8Array.from(decoded, (char) => char.charCodeAt(0));
}

/** base64(HMAC-SHA256(key, content)), by WebCrypto. */
async function sign(key: Uint8Array<ArrayBuffer>, content: string): Promise<string> {
  const subtle = globalThis.crypto?.subtle;
  if (!subtle) throw new Error('verifyWebhook needs WebCrypto (globalThis.crypto.subtle)');
  const hmacKey = await subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const mac = new Uint8Array(await subtle.sign('HMAC', hmacKey, new TextEncoder().encode(content)));
  return btoa(String.fromCharCode(...mac));
}

/** Whether two strings are equal, in a time that depends on their lengths only. */
function equalInConstantTime(given: string, expected: string): boolean {
  let difference = given.length ^ expected.length;
  // Past the end of `given`, charCodeAt is NaN: `| 0` makes it 0, the lengths already differ.
  for (let i = 0; i < expected.length; i++) difference |= (given.charCodeAt(i) | 0) ^ expected.charCodeAt(i);
  return difference === 0;
}
