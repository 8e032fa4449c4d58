import { isUtf8 } from 'node:buffer';
import { json, NextFunction, Request, RequestHandler, Response } from 'express';
import { ApiException } from '../common/errors/api-exception';
import { codeForStatus, ErrorCode } from '../common/errors/error-codes';
import { MERGE_PATCH } from '../common/openapi/headers';
import { RouteIndex } from './route-index';

const PARSER_ERRORS: Record<string, [ErrorCode, string?]> = {
  'entity.parse.failed': ['invalid_json'],
  'entity.utf8.invalid': ['invalid_json', 'The request body is not valid UTF-8.'],
  'encoding.unsupported': ['unsupported_media_type', 'The request body has an unsupported Content-Encoding.'],
  'charset.unsupported': ['unsupported_media_type', 'The request body must be JSON in UTF-8.'],
  'request.size.invalid': ['bad_request', 'The request body does not match its Content-Length.'],
  'request.aborted': ['bad_request', 'The request body was not sent completely.'],
};

function parserError(type: keyof typeof PARSER_ERRORS): Error {
  return Object.assign(new Error(type), { type });
}

/** JSON is UTF-8 (RFC 8259 §8.1): refused, not decoded from another charset or patched with U+FFFD. */
function requireUtf8(_req: Request, _res: Response, body: Buffer, encoding: string): void {
  if (encoding !== 'utf-8' && encoding !== 'utf8') throw parserError('charset.unsupported');
  if (!isUtf8(body)) throw parserError('entity.utf8.invalid');
}

function toApiException(error: unknown, limitBytes: number): ApiException {
  const { type, status } = (error ?? {}) as { type?: unknown; status?: unknown };
  if (type === 'entity.too.large')
    return new ApiException(
      'payload_too_large',
      `The request body is larger than the limit of ${limitBytes} bytes.`,
    );
  const known = typeof type === 'string' ? PARSER_ERRORS[type] : undefined;
  if (known) return new ApiException(known[0], known[1]);
  // Only a failed decompression comes without a type.
  if (status === 400)
    return new ApiException('bad_request', 'The request body does not match its Content-Encoding.');
  return new ApiException(typeof status === 'number' && status < 500 ? codeForStatus(status) : 'bad_request');
}

/** Any JSON value, so validation can say what is wrong; no route means 404/405 whatever the body. */
export function jsonBody(limitBytes: number, routes: RouteIndex): RequestHandler {
  const parse = json({ limit: limitBytes, strict: false, type: () => true, verify: requireUtf8 });
  return (req: Request, res: Response, next: NextFunction) => {
    const length = req.headers['content-length'];
    if (req.headers['transfer-encoding'] === undefined && (length === undefined || length === '0'))
      return next();
    const refuse = (error: ApiException) =>
      next(routes.allowedMethods(req.path).includes(req.method) ? error : undefined);
    const mediaType = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
    // A PATCH is a merge patch (RFC 7396); other `+json` types (problem, json-patch) mean other things.
    if (req.method === 'PATCH') {
      if (mediaType !== MERGE_PATCH)
        return refuse(
          new ApiException('unsupported_media_type', `A PATCH body must be sent as ${MERGE_PATCH} (UTF-8).`),
        );
    } else if (mediaType !== 'application/json') return refuse(new ApiException('unsupported_media_type'));
    if (Number(length) > limitBytes) {
      // Answer and close now rather than read a body that will be refused anyway.
      res.setHeader('Connection', 'close');
      return refuse(toApiException({ type: 'entity.too.large' }, limitBytes));
    }
    parse(req, res, (error?: unknown) =>
      error === undefined ? next() : refuse(toApiException(error, limitBytes)),
    );
  };
}
