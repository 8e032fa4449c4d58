interface JsonText {
  text: string;
  bytes: number;
}

/** Response bodies made by `responseOf`, by what they were made from; and their JSON once written. */
const bodies = new WeakMap<object, object>();
const texts = new WeakMap<object, JsonText | null>();

/**
 * The response body `build` makes from `source`, made once per source object: a row or page the
 * read cache hands out again gets the same body, whose JSON the HTTP adapter writes without
 * serialising it again (docs/architecture.md). Such a body must never be changed.
 */
export function responseOf<S extends object, R extends object>(source: S, build: (source: S) => R): R {
  let body = bodies.get(source) as R | undefined;
  if (body === undefined) {
    body = build(source);
    bodies.set(source, body);
    texts.set(body, null);
  }
  return body;
}

/** The JSON of a body `responseOf` made, serialised at its first answer; undefined for any other. */
export function responseJson(body: object): JsonText | undefined {
  const known = texts.get(body);
  if (known !== null) return known;
  const text = JSON.stringify(body);
  const json = { text, bytes: Buffer.byteLength(text) };
  texts.set(body, json);
  return json;
}
