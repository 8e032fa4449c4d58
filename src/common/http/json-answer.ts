import type { IncomingMessage, ServerResponse } from 'node:http';

/** What `res.json` sends, charset included (Express adds it to any string body). */
export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** A JSON answer serialised once, with its length in bytes. */
export interface JsonText {
  readonly text: string;
  readonly bytes: number;
}

export function jsonText(value: unknown): JsonText {
  const text = JSON.stringify(value);
  return { text, bytes: Buffer.byteLength(text) };
}

/**
 * Whether a GET or HEAD asks "only if nothing exists" (`If-None-Match: *`, RFC 9110 §13.1.2):
 * the one conditional that an answer without ETag or Last-Modified satisfies, and that
 * `res.send` answers 304.
 */
function onlyIfNone(req: IncomingMessage | undefined): boolean {
  if (req === undefined || (req.method !== 'GET' && req.method !== 'HEAD')) return false;
  if (req.headers['if-none-match']?.trim() !== '*') return false;
  return !/(?:^|,)\s*no-cache\s*(?:,|$)/.test(req.headers['cache-control'] ?? '');
}

/**
 * Ends the response with JSON serialised beforehand: the status, `Content-Type` and
 * `Content-Length` that `res.json` would send, and the same bytes, without the work Express
 * does per answer (serialising, measuring, re-parsing the Content-Type). A HEAD request gets
 * the headers only: Node drops the body. `If-None-Match: *` on a 200 is answered 304 without a
 * body, as `res.send` answers it.
 */
export function sendJsonText(res: ServerResponse, status: number, json: JsonText): void {
  if (status === 200 && onlyIfNone(res.req)) {
    res.statusCode = 304;
    res.end();
    return;
  }
  res.statusCode = status;
  res.setHeader('Content-Type', JSON_CONTENT_TYPE);
  res.setHeader('Content-Length', json.bytes);
  res.end(json.text);
}

/**
 * The JSON text of objects handed out again and again (cached pages and records), serialised
 * once per object: keyed by the object itself, so one that is not kept leaves nothing behind.
 */
export class JsonTexts {
  private readonly texts = new WeakMap<object, JsonText>();

  /** The JSON of `body()`, computed the first time `source` is seen. */
  of(source: object, body: () => unknown): JsonText {
    let json = this.texts.get(source);
    if (json === undefined) {
      json = jsonText(body());
      this.texts.set(source, json);
    }
    return json;
  }
}
