import type { DatabaseConfig } from '../config/app-config';
import { databaseOutageCause, isBrokenConnection, layers } from './outage';

/** PostgreSQL: a refused connection or statement is tried again up to `outageWaitMs`: a restart is a wait, not a 503. */
export class OutageWaiting {
  private waiting = 0;

  constructor(private readonly config: Pick<DatabaseConfig, 'outageWaitMs' | 'outageMaxWaiting'>) {}

  async retry<T>(work: () => Promise<T>, safeToRepeat: (error: unknown) => boolean): Promise<T> {
    const deadline = Date.now() + this.config.outageWaitMs;
    for (let attempt = 0; ; attempt++) {
      try {
        return await work();
      } catch (error) {
        const left = deadline - Date.now();
        const outage = databaseOutageCause(error) !== undefined;
        if (!outage || left <= 0 || this.waiting >= this.config.outageMaxWaiting || !safeToRepeat(error))
          throw error;
        this.waiting++;
        try {
          await new Promise((resolve) => setTimeout(resolve, Math.min(25 * 2 ** attempt, 250, left)));
        } finally {
          this.waiting--;
        }
      }
    }
  }
}

/** The server shutting down (57P01-03) or TypeORM refusing a lost connection. */
const surelyNotCommitted = (error: unknown) =>
  [...layers(error)].some(
    ({ code, name }) => /^57P0[1-3]$/.test(code) || name === 'QueryRunnerAlreadyReleasedError',
  );

/** Repeated only if it failed before COMMIT: a COMMIT without an answer may have committed. */
export function retryUnlessCommitted<T>(
  policy: OutageWaiting | undefined,
  work: (reachedCommit: () => void) => Promise<T>,
): Promise<T> {
  let committing = false;
  const attempt = () => {
    committing = false;
    return work(() => (committing = true));
  };
  return policy ? policy.retry(attempt, (error) => !committing || surelyNotCommitted(error)) : attempt();
}

/** A read, repeated within the outage wait; without one (SQLite), once more on a broken connection. */
export async function repeatable<T>(policy: OutageWaiting | undefined, read: () => Promise<T>): Promise<T> {
  if (policy) return policy.retry(read, () => true);
  try {
    return await read();
  } catch (error) {
    if (!isBrokenConnection(error)) throw error;
    return read();
  }
}
