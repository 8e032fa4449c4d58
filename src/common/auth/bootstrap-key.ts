import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { ConfigError } from '../../config/app-config';
import { isWellFormedApiKey } from './api-key.format';

export type KeySource = 'environment' | 'stored' | 'generated';

export interface ResolvedKeys {
  keys: string[];
  source: KeySource;
  /** Set only when a key was created by this start: the one time it may be shown. */
  newKey?: string;
  /** Where the bootstrap key is kept, when there is such a file. */
  keyFile?: string;
}

/** 32 bytes from the CSPRNG, URL-safe, with a prefix that secret scanners can match. */
export function generateApiKey(): string {
  return `pet_${randomBytes(32).toString('base64url')}`;
}

function readStoredKey(path: string): string | undefined {
  let key: string;
  try {
    key = readFileSync(path, 'utf8').trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  if (!isWellFormedApiKey(key)) {
    throw new ConfigError(
      `the bootstrap key file ${path} does not hold a valid key: delete it or set API_KEYS`,
    );
  }
  return key;
}

/**
 * Writes the key to `path` only if no file is there, never leaving a partial file: the key is
 * written to a private temporary file first, then hard-linked into place (atomic, and failing
 * with EEXIST if another instance got there first). Returns false when it lost that race.
 */
function createKeyFile(path: string, key: string): boolean {
  const temporary = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(temporary, `${key}\n`, { mode: 0o600, flag: 'wx' });
  try {
    linkSync(temporary, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    rmSync(temporary, { force: true });
  }
}

/**
 * The keys the service accepts. `API_KEYS` wins; without it the service never starts open:
 * it uses the bootstrap key stored beside the database, creating it on the first start.
 * With an in-memory database there is nowhere to keep it, so each start makes a new one.
 */
export function resolveApiKeys(configured: readonly string[], keyFile: string | null): ResolvedKeys {
  if (configured.length > 0) return { keys: [...configured], source: 'environment' };
  if (keyFile === null) {
    const key = generateApiKey();
    return { keys: [key], source: 'generated', newKey: key };
  }
  const existing = readStoredKey(keyFile);
  if (existing) return { keys: [existing], source: 'stored', keyFile };

  mkdirSync(dirname(keyFile), { recursive: true });
  const key = generateApiKey();
  if (createKeyFile(keyFile, key)) return { keys: [key], source: 'generated', newKey: key, keyFile };
  return { keys: [readStoredKey(keyFile)!], source: 'stored', keyFile };
}
