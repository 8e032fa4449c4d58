import type { ServerResponse } from 'node:http';

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
 * Ends the response with JSON serialised beforehand: the status, `Content-Type` and
 * `Content-Length` that `res.json` would send, and the same bytes, without the work Express
 * does per answer (serialising, measuring, re-parsing the Content-Type, the freshness check,
 * which an answer without ETag or Last-Modified never passes). A HEAD request gets the headers
 * only: Node drops the body.
 */
export function sendJsonText(res: ServerResponse, status: number, json: JsonText): void {
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
