import type { DataSource } from 'typeorm';
import type { DatabaseConfig } from '../config/app-config';
import { databaseOutageCause, isBrokenConnection } from './outage';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

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
          await sleep(Math.min(25 * 2 ** attempt, 250, left));
        } finally {
          this.waiting--;
        }
      }
    }
  }
}

/** TypeORM's pool asks for a connection again while the database restarts. */
export function installOutageWait(dataSource: DataSource, policy: OutageWaiting | undefined): void {
  if (!policy) return;
  const driver = dataSource.driver as unknown as { obtainMasterConnection: () => Promise<unknown> };
  const obtain = driver.obtainMasterConnection.bind(driver);
  driver.obtainMasterConnection = () => policy.retry(obtain, () => true);
}

/** The server shutting down (57P01-03) or TypeORM refusing a lost connection. */
function surelyNotCommitted(error: unknown): boolean {
  let layer = error as { code?: unknown; name?: unknown; driverError?: unknown } | undefined;
  for (let depth = 0; layer && depth < 3; depth++) {
    if (typeof layer.code === 'string' && /^57P0[1-3]$/.test(layer.code)) return true;
    if (layer.name === 'QueryRunnerAlreadyReleasedError') return true;
    layer = layer.driverError as typeof layer;
  }
  return false;
}

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
