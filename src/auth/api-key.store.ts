import { createHash, timingSafeEqual } from 'node:crypto';

/** The SHA-256 digest of a key: what is compared, counted and looked up instead of the key. */
export function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/**
 * The set of valid API keys, held as SHA-256 digests. Checking compares the digest of the
 * presented key with every stored digest in constant time and without stopping early, so
 * neither the key's content nor its position in the list shows in the timing.
 */
export class ApiKeyStore {
  private readonly digests: Buffer[];

  constructor(keys: Iterable<string>) {
    this.digests = [...keys].map(digest);
  }

  get size(): number {
    return this.digests.length;
  }

  isValid(presented: string): boolean {
    return this.isValidDigest(digest(presented));
  }

  /** `isValid` for a key whose digest the caller already has. */
  isValidDigest(candidate: Buffer): boolean {
    let valid = false;
    for (const stored of this.digests) {
      valid = timingSafeEqual(candidate, stored) || valid;
    }
    return valid;
  }
}
