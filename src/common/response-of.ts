const bodies = new WeakMap<object, object>();
const texts = new WeakMap<object, { text: string; bytes: number } | null>();

/** One body per source object: a cached row's JSON is written once. Such a body must never change. */
export function responseOf<S extends object, R extends object>(source: S, build: (source: S) => R): R {
  let body = bodies.get(source) as R | undefined;
  if (body === undefined) {
    body = build(source);
    bodies.set(source, body);
    texts.set(body, null);
  }
  return body;
}

/** Serialised at its first answer; undefined for a body `responseOf` did not make. */
export function responseJson(body: object) {
  const known = texts.get(body);
  if (known !== null) return known;
  const text = JSON.stringify(body);
  const json = { text, bytes: Buffer.byteLength(text) };
  texts.set(body, json);
  return json;
}
