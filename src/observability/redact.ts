/** Names of headers, fields and query parameters whose values are never written to a log. */
const SECRET_NAME = /key|token|secret|passw|auth|credential|signature|session|cookie/i;

export const REDACTED = '[Redacted]';

const SECRET_FIELDS = ['authorization', 'cookie', 'apiKey', 'apiKeys', 'key', 'password', 'token'];
const SECRET_HEADERS = [
  'authorization',
  'cookie',
  '["proxy-authorization"]',
  '["x-api-key"]',
  '["set-cookie"]',
];

/** Censored in every log record, whoever logs it: at the top level, one level down, and in headers. */
export const REDACT_PATHS = [
  ...SECRET_FIELDS,
  ...SECRET_FIELDS.map((field) => `*.${field}`),
  ...SECRET_HEADERS.map((header) => `*.headers${header.startsWith('[') ? '' : '.'}${header}`),
];

export function redactUrl(url: string): string {
  const start = url.indexOf('?');
  if (start === -1) return url;
  const parts = url
    .slice(start + 1)
    .split('&')
    .map((part) => {
      const separator = part.indexOf('=');
      const name = separator === -1 ? part : part.slice(0, separator);
      let decoded = name;
      try {
        decoded = decodeURIComponent(name.replace(/\+/g, ' '));
      } catch {
        // A malformed escape: judge the name as written.
      }
      return separator !== -1 && SECRET_NAME.test(decoded) ? `${name}=${REDACTED}` : part;
    });
  return `${url.slice(0, start)}?${parts.join('&')}`;
}
