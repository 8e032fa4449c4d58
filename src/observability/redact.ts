/** Names of headers, fields and query parameters whose values are never written to a log. */
const SECRET_NAME = /key|token|secret|passw|auth|credential|signature|session|cookie/i;

export const REDACTED = '[Redacted]';

const SECRET_FIELDS = ['authorization', 'cookie', 'apiKey', 'apiKeys', 'key', 'password', 'token'];

/** Censored in every log record, whoever logs it: at the top level, one level down, and in headers. */
export const REDACT_PATHS = [
  ...SECRET_FIELDS,
  ...SECRET_FIELDS.map((field) => `*.${field}`),
  '*.headers.authorization',
  '*.headers.cookie',
  '*.headers["proxy-authorization"]',
  '*.headers["x-api-key"]',
  '*.headers["set-cookie"]',
];

/** The stored-key format (`pet_` and base64url), also cut short. */
let keyShaped = /pet_[A-Za-z0-9_-]{16,}/;

/** The `API_KEYS` entries, kept for the process's life: a key, once configured, stays a secret. */
export function protectSecrets(values: readonly string[]): void {
  const escaped = values.map((value) => value.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'));
  keyShaped = new RegExp([keyShaped.source, ...escaped].join('|'));
}

function decoded(text: string, plusIsSpace: boolean): string {
  try {
    return decodeURIComponent(plusIsSpace ? text.replace(/\+/g, ' ') : text);
  } catch {
    return text; // a malformed escape: judged as written
  }
}

/** As written, and decoded: a `+` is a space in a query, itself in a path. */
const holdsKey = (text: string, inQuery: boolean) =>
  keyShaped.test(text) ||
  keyShaped.test(decoded(text, false)) ||
  (inQuery && keyShaped.test(decoded(text, true)));

/** Keys as written are cut out of the path whole (one may hold `/`); escaped ones take their segment. */
function redactPath(path: string): string {
  const cut = path.replace(new RegExp(keyShaped.source, 'g'), REDACTED);
  const segments = cut.split('/').map((segment) => (holdsKey(segment, false) ? REDACTED : segment));
  const redacted = segments.join('/');
  return holdsKey(redacted, false) ? `/${REDACTED}` : redacted;
}

/** Key-shaped values (`/v1/pets/KEY`, `?k=KEY`, `?x=1;api_key=KEY`, escaped or not), secret-named params. */
export function redactUrl(url: string): string {
  if (!url.includes('?') && !url.includes('%') && !keyShaped.test(url)) return url;
  const start = url.indexOf('?');
  const path = redactPath(start === -1 ? url : url.slice(0, start));
  if (start === -1) return path;
  const query = url.slice(start + 1).replace(/[^&;]+/g, (part) => {
    const separator = part.indexOf('=');
    const name = separator === -1 ? part : part.slice(0, separator);
    if (separator === -1) return holdsKey(part, true) ? REDACTED : part;
    return SECRET_NAME.test(decoded(name, true)) || holdsKey(part, true) ? `${name}=${REDACTED}` : part;
  });
  return `${path}?${query}`;
}
