import { json, NextFunction, Request, RequestHandler, Response } from 'express';
import { ApiException } from '../errors/api-exception';
import { codeForStatus, ErrorCode } from '../errors/error-codes';

const JSON_MEDIA_TYPE = /^application\/(?:[\w.+-]+\+)?json$/;

/** Errors of Express's body parser carry a `type` naming what went wrong. */
const PARSER_ERRORS: Record<string, [ErrorCode, string?]> = {
  'entity.parse.failed': ['invalid_json'],
  'entity.too.large': ['payload_too_large'],
  'encoding.unsupported': ['unsupported_media_type', 'The request body has an unsupported Content-Encoding.'],
  'charset.unsupported': ['unsupported_media_type', 'The request body must be JSON in UTF-8.'],
  'request.size.invalid': ['bad_request', 'The request body does not match its Content-Length.'],
  'request.aborted': ['bad_request', 'The request body was not sent completely.'],
};

function hasBody(req: Request): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

function toApiException(error: unknown, limitBytes: number): ApiException {
  const { type, status } = (error ?? {}) as { type?: unknown; status?: unknown };
  const known = typeof type === 'string' ? PARSER_ERRORS[type] : undefined;
  if (known?.[0] === 'payload_too_large') {
    return new ApiException(
      'payload_too_large',
      `The request body is larger than the limit of ${limitBytes} bytes.`,
    );
  }
  if (known) return new ApiException(known[0], known[1]);
  return new ApiException(typeof status === 'number' && status < 500 ? codeForStatus(status) : 'bad_request');
}

/**
 * Parses JSON bodies up to `limitBytes`, answering every failure in the Error shape: a body
 * sent as anything but JSON is 415, malformed JSON 400 `invalid_json`, an oversized body 413.
 * Any JSON value is parsed (not just objects) so that validation can say what is wrong with it.
 */
export function jsonBody(limitBytes: number): RequestHandler {
  const parse = json({ limit: limitBytes, strict: false, type: () => true });
  return (req: Request, res: Response, next: NextFunction) => {
    if (!hasBody(req)) return next();
    const mediaType = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
    if (!JSON_MEDIA_TYPE.test(mediaType)) return next(new ApiException('unsupported_media_type'));
    parse(req, res, (error?: unknown) =>
      next(error === undefined ? undefined : toApiException(error, limitBytes)),
    );
  };
}
