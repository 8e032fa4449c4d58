import { Logger } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import type { WebhookDeliveryEntity } from './webhook-delivery.entity';

/**
 * Outcomes wait this long to be written together, without holding a place: a statement's fixed
 * cost on SQLite (its WAL frames) was most of a small one's. One lost in a crash is sent again.
 */
const OUTCOMES_EVERY_MS = 20;
/** Outcomes per statement, well within either database's limit on parameters. */
const OUTCOMES_PER_WRITE = 500;

/** An attempt's outcome, to be written where `lease` is still the delivery's. */
export type Outcome = Pick<
  WebhookDeliveryEntity,
  'id' | 'status' | 'tries' | 'attempts' | 'nextAttemptAt' | 'deliveredAt'
> & { lease: number };

/** Attempts' outcomes, written together: one statement (and one fsync) per batch, not per delivery. */
export class OutcomeWriter {
  private readonly logger = new Logger('Webhooks');
  private readonly outcomes: Outcome[] = [];
  private writing?: Promise<void>;

  constructor(
    private readonly connection: DataSource,
    private readonly stopping: () => boolean,
  ) {}

  /** Outcomes not yet written. */
  get waiting(): number {
    return this.outcomes.length;
  }

  add(outcome: Outcome): void {
    this.outcomes.push(outcome);
    void this.writeSoon();
  }

  /** Until every outcome is written (or, stopping, could not be). */
  async flush(): Promise<void> {
    while (this.writing || this.outcomes.length > 0) await (this.writing ?? this.writeSoon());
  }

  /** One write at a time: outcomes that come meanwhile go together in the next one. */
  private writeSoon(): Promise<void> {
    return (this.writing ??= (async () => {
      await new Promise((resolve) => setTimeout(resolve, OUTCOMES_EVERY_MS));
      try {
        while (this.outcomes.length > 0) {
          const batch = this.outcomes.splice(0, OUTCOMES_PER_WRITE);
          try {
            await writeOutcomes(this.connection, batch);
          } catch (error) {
            this.logger.warn(`webhook attempts could not be recorded: ${(error as Error).message}`);
            // Kept for the next try; a stopping process leaves them to their leases (sent again).
            if (this.stopping()) return;
            this.outcomes.unshift(...batch);
            await new Promise((resolve) => setTimeout(resolve, 1000));
          }
        }
      } finally {
        this.writing = undefined; // at once: an outcome added after the last check starts the next write
      }
    })());
  }
}

/** Each outcome only where its attempt still holds the lease: a late answer never overwrites a newer attempt. */
async function writeOutcomes(connection: DataSource, outcomes: Outcome[]): Promise<void> {
  const postgres = connection.options.type === 'postgres';
  const types = ['bigint', 'bigint', 'varchar', 'integer', 'text', 'bigint', 'bigint'];
  let n = 0;
  const tuples = outcomes.map(
    () =>
      `(${types.map((type) => connection.driver.createParameter('', n++) + (postgres ? `::${type}` : '')).join(', ')})`,
  );
  // VALUES columns are column1, column2, ... in both SQLite and PostgreSQL.
  await connection.query(
    `UPDATE webhook_deliveries SET status = v.column3, tries = v.column4, attempts = v.column5,
       next_attempt_at = v.column6, delivered_at = v.column7
     FROM (VALUES ${tuples.join(', ')}) AS v
     WHERE webhook_deliveries.id = v.column1 AND webhook_deliveries.status = 'pending'
       AND webhook_deliveries.next_attempt_at = v.column2`,
    outcomes.flatMap((o) => [o.id, o.lease, o.status, o.tries, o.attempts, o.nextAttemptAt, o.deliveredAt]),
  );
}
