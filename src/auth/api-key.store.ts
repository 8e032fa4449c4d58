import * as crypto from 'node:crypto';

/** One call into OpenSSL (Node 20.12 and later): no Hash stream object per request. */
const oneShotHash = crypto.hash as typeof crypto.hash | undefined;

/** The SHA-256 digest of a key: what is compared, counted and looked up instead of the key. */
export function digest(value: string): Buffer {
  return oneShotHash
    ? oneShotHash('sha256', value, 'buffer')
    : crypto.createHash('sha256').update(value, 'utf8').digest();
}

/**
 * The set of valid API keys, held as SHA-256 digests. Checking compares the digest of the
 * presented key with every stored digest in constant time and without stopping early, so
 * neither the key's content nor its position in the list shows in the timing.
 */
export class ApiKeyStore {
  private readonly digests: Buffer[];
  /** Each digest in hex, the owner recorded for its key (computed once, not per request). */
  private readonly owners: string[];

  constructor(keys: Iterable<string>) {
    this.digests = [...keys].map(digest);
    this.owners = this.digests.map((stored) => stored.toString('hex'));
  }

  get size(): number {
    return this.digests.length;
  }

  isValid(presented: string): boolean {
    return this.ownerOf(digest(presented)) !== undefined;
  }

  /**
   * The hex digest of the configured key with this digest, or undefined: every stored digest is
   * compared, in constant time, whether or not an earlier one matched.
   */
  ownerOf(candidate: Buffer): string | undefined {
    let match = -1;
    for (let index = 0; index < this.digests.length; index++) {
      if (crypto.timingSafeEqual(candidate, this.digests[index])) match = index;
    }
    return match === -1 ? undefined : this.owners[match];
  }
}
