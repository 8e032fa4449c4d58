/** Names of headers, fields and query parameters whose values are never written to a log. */
const SECRET_NAME = /key|token|secret|passw|auth|credential|signature|session|cookie/i;

export const REDACTED = '[Redacted]';

/** Censored in every log record, whoever logs it. */
export const REDACT_PATHS = [
  'authorization',
  'cookie',
  'apiKey',
  'apiKeys',
  'key',
  'password',
  'token',
  '*.authorization',
  '*.cookie',
  '*.apiKey',
  '*.apiKeys',
  '*.key',
  '*.password',
  '*.token',
  '*.headers.authorization',
  '*.headers.cookie',
  '*.headers["proxy-authorization"]',
  '*.headers["x-api-key"]',
  '*.headers["set-cookie"]',
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
