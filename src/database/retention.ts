import { Logger } from '@nestjs/common';
import { FindOptionsOrder, FindOptionsSelect, Repository } from 'typeorm';

export const DAY_MS = 86_400_000;
const BATCH = 1000;
const EVERY_MS = 3_600_000;

/** Deletes rows whose `column` (epoch ms) is before `cutoff`, in batches from the lowest (oldest) ids. */
export async function pruneBefore<E extends { id: number }>(
  repository: Repository<E>,
  column: keyof E & string,
  cutoff: number,
): Promise<number> {
  let removed = 0;
  for (;;) {
    const oldest = await repository.find({
      select: { id: true, [column]: true } as FindOptionsSelect<E>,
      order: { id: 'ASC' } as FindOptionsOrder<E>,
      take: BATCH,
    });
    const old = oldest.filter((row) => (row[column] as number) < cutoff).map(({ id }) => id);
    if (old.length > 0) await repository.delete(old);
    removed += old.length;
    if (old.length < BATCH) return removed;
  }
}

/** Runs `prune` now and every hour until the returned function stops it; a failure is a warning. */
export function pruneHourly(logger: Logger, what: string, prune: () => Promise<unknown>): () => void {
  const run = () =>
    void prune().catch((error: unknown) =>
      logger.warn(`pruning ${what} failed: ${(error as Error).message}`),
    );
  const timer = setInterval(run, EVERY_MS).unref();
  run();
  return () => clearInterval(timer);
}
