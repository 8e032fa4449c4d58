import { createHash } from 'node:crypto';
import { ApiKeyStore, digest } from './api-key.store';

describe('ApiKeyStore', () => {
  const accepts = (store: ApiKeyStore, presented: string) => store.ownerOf(digest(presented)) !== undefined;
  const first = 'first-key-0123456789abcdef';
  const second = 'pet_SecondKey-0123456789_abcdef';

  it('accepts every configured key', () => {
    const store = new ApiKeyStore([first, second]);

    expect(accepts(store, first)).toBe(true);
    expect(accepts(store, second)).toBe(true);
  });

  it.each([
    ['an unknown key', 'unknown-key-0123456789abcdef'],
    ['a prefix of a key', first.slice(0, -1)],
    ['a key with an extra character', `${first}x`],
    ['a key in another case', first.toUpperCase()],
    ['the empty string', ''],
  ])('rejects %s', (_label, presented) => {
    expect(accepts(new ApiKeyStore([first, second]), presented)).toBe(false);
  });

  it('accepts nothing when it holds no key', () => {
    const store = new ApiKeyStore([]);

    expect(accepts(store, '')).toBe(false);
    expect(accepts(store, first)).toBe(false);
  });

  it('digests a key with SHA-256', () => {
    expect(digest(first)).toEqual(createHash('sha256').update(first, 'utf8').digest());
    expect(digest('clé ünïcode')).toEqual(createHash('sha256').update('clé ünïcode', 'utf8').digest());
  });

  it("names the matching key's owner: the hex SHA-256 digest of that key", () => {
    const store = new ApiKeyStore([first, second]);
    const hex = (key: string) => createHash('sha256').update(key).digest('hex');

    expect(store.ownerOf(digest(first))).toBe(hex(first));
    expect(store.ownerOf(digest(second))).toBe(hex(second));
    expect(store.ownerOf(digest('unknown-key-0123456789abcdef'))).toBeUndefined();
  });

  it('does not keep the keys in clear', () => {
    const store = new ApiKeyStore(new Set([first]));

    expect(JSON.stringify(store)).not.toContain(first);
  });
});
