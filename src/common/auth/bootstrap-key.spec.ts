import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateApiKey, resolveApiKeys } from './bootstrap-key';

const KEY_FORMAT = /^pet_[A-Za-z0-9_-]{43}$/;

/** The key without its prefix, decoded: the random bytes it carries. */
function randomPart(key: string): Buffer {
  expect(key.startsWith('pet_')).toBe(true);
  return Buffer.from(key.slice('pet_'.length), 'base64url');
}

describe('generateApiKey', () => {
  it('makes a pet_-prefixed base64url key of 32 random bytes', () => {
    const key = generateApiKey();

    expect(key).toMatch(KEY_FORMAT);
    expect(randomPart(key).length).toBeGreaterThanOrEqual(32);
    expect(randomPart(key).toString('base64url')).toBe(key.slice(4));
  });

  it('makes a different key each time', () => {
    const keys = new Set(Array.from({ length: 20 }, () => generateApiKey()));

    expect(keys.size).toBe(20);
  });
});

describe('resolveApiKeys', () => {
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'petstore-keys-'));
  });

  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('uses the configured keys and touches no file', () => {
    const keyFile = join(dir, 'bootstrap-api-key');
    const configured = ['configured-key-0123456789', 'second-configured-key-0123'];

    expect(resolveApiKeys(configured, keyFile)).toEqual({ keys: configured, source: 'environment' });
    expect(() => statSync(keyFile)).toThrow(expect.objectContaining({ code: 'ENOENT' }));
  });

  it('prefers the configured keys over a stored one', () => {
    const keyFile = join(dir, 'bootstrap-api-key');
    writeFileSync(keyFile, 'pet_stored-key-0123456789abcdef\n');

    expect(resolveApiKeys(['configured-key-0123456789'], keyFile)).toEqual({
      keys: ['configured-key-0123456789'],
      source: 'environment',
    });
  });

  it('returns a copy of the configured keys', () => {
    const configured = ['configured-key-0123456789'];
    const resolved = resolveApiKeys(configured, null);

    resolved.keys.push('added-later-0123456789');
    expect(configured).toEqual(['configured-key-0123456789']);
  });

  it('creates the key file (mode 0600, parent folders included) on the first start and reuses it after', () => {
    const keyFile = join(dir, 'nested', 'data', 'bootstrap-api-key');

    const first = resolveApiKeys([], keyFile);
    const key = first.newKey!;
    expect(first).toEqual({ keys: [key], source: 'generated', newKey: key, keyFile });
    expect(key).toMatch(KEY_FORMAT);
    expect(randomPart(key).length).toBeGreaterThanOrEqual(32);
    expect(readFileSync(keyFile, 'utf8')).toBe(`${key}\n`);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);

    expect(resolveApiKeys([], keyFile)).toEqual({ keys: [key], source: 'stored', keyFile });
    expect(readFileSync(keyFile, 'utf8')).toBe(`${key}\n`);
  });

  it('uses a key someone stored in the file, trimmed', () => {
    const keyFile = join(dir, 'bootstrap-api-key');
    writeFileSync(keyFile, '  pet_stored-key-0123456789abcdef \r\n');

    expect(resolveApiKeys([], keyFile)).toEqual({
      keys: ['pet_stored-key-0123456789abcdef'],
      source: 'stored',
      keyFile,
    });
  });

  it('reports a key file it cannot read instead of replacing it', () => {
    const keyFile = join(dir, 'bootstrap-api-key');
    mkdirSync(keyFile);

    expect(() => resolveApiKeys([], keyFile)).toThrow(expect.objectContaining({ code: 'EISDIR' }));
  });

  it('generates a new key on every start when there is nowhere to keep it', () => {
    const first = resolveApiKeys([], null);
    const second = resolveApiKeys([], null);

    expect(first).toEqual({ keys: [first.newKey], source: 'generated', newKey: first.newKey });
    expect(second).toEqual({ keys: [second.newKey], source: 'generated', newKey: second.newKey });
    expect(first.newKey).toMatch(KEY_FORMAT);
    expect(second.newKey).toMatch(KEY_FORMAT);
    expect(first.newKey).not.toBe(second.newKey);
    expect(randomPart(first.newKey!).length).toBeGreaterThanOrEqual(32);
  });
});
