import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

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

function readKey(path: string): string | undefined {
  try {
    const key = readFileSync(path, 'utf8').trim();
    return key === '' ? undefined : key;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
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
  const existing = readKey(keyFile);
  if (existing) return { keys: [existing], source: 'stored', keyFile };

  mkdirSync(dirname(keyFile), { recursive: true });
  const key = generateApiKey();
  try {
    // 'wx': if another instance created it a moment ago, use that one instead.
    writeFileSync(keyFile, `${key}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const raced = readKey(keyFile);
    if (raced) return { keys: [raced], source: 'stored', keyFile };
    throw error;
  }
  return { keys: [key], source: 'generated', newKey: key, keyFile };
}
