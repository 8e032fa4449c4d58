import type { RequestHandler } from 'express';
import helmet from 'helmet';

/**
 * The headers of every API answer (OWASP REST Security Cheat Sheet): nothing is cached, nothing
 * may be rendered, framed, sniffed or followed by a referrer, and https is remembered. None of
 * the headers that only HTML pages need.
 */
export const API_SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'Cache-Control': 'no-store',
  'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Strict-Transport-Security': 'max-age=31536000; includeSubDomains',
  'Referrer-Policy': 'no-referrer',
});

const API_HEADER_ENTRIES = Object.entries(API_SECURITY_HEADERS);

/**
 * The API set on every answer but the API docs page, which gets helmet's page policy without
 * `upgrade-insecure-requests`: served over plain http from any host but localhost, that
 * directive makes the browser fetch the UI's own scripts over https, and the page stays blank.
 */
export function securityHeaders(docsPath: string): RequestHandler {
  const docsPage = helmet({ contentSecurityPolicy: { directives: { upgradeInsecureRequests: null } } });
  const docsPrefix = `/${docsPath}`;
  return (req, res, next) => {
    const path = req.path;
    if (
      path.startsWith(docsPrefix) &&
      (path.length === docsPrefix.length || path[docsPrefix.length] === '/')
    ) {
      return docsPage(req, res, next);
    }
    for (const [name, value] of API_HEADER_ENTRIES) res.setHeader(name, value);
    next();
  };
}
