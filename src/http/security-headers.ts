import type { RequestHandler } from 'express';
import helmet from 'helmet';

/** OWASP REST Security Cheat Sheet. */
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
 * The docs page: helmet without `upgrade-insecure-requests`, which blanks it when served over plain
 * http; Swagger UI may fetch a token from `tokenUrl`.
 */
export function securityHeaders(docsPath: string, tokenUrl?: string): RequestHandler {
  const directives: Record<string, string[] | null> = { upgradeInsecureRequests: null };
  if (tokenUrl !== undefined) directives.connectSrc = ["'self'", new URL(tokenUrl).origin];
  const docsPage = helmet({ contentSecurityPolicy: { directives } });
  const docsPrefix = `/${docsPath}`;
  return (req, res, next) => {
    const path = req.path;
    if (path.startsWith(docsPrefix) && (path.length === docsPrefix.length || path[docsPrefix.length] === '/'))
      return docsPage(req, res, next);
    for (const [name, value] of API_HEADER_ENTRIES) res.setHeader(name, value);
    next();
  };
}
