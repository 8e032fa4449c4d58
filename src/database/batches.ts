interface Pending {
  values: readonly unknown[];
  resolve: (result: unknown) => void;
  reject: (error: unknown) => void;
}

/** Sends a batch's rows as one statement; answers each row's result, in the rows' order. */
export type SendBatch = (rows: (readonly unknown[])[]) => Promise<unknown[]>;

/**
 * PostgreSQL, where each statement is a round trip: the rows that a transaction's units send
 * meanwhile, by statement. Each batch goes once the units have run on to their next wait.
 */
export class Batches {
  private readonly batches = new Map<string, { rows: Pending[]; send: SendBatch }>();

  /** Whether batch `key` holds a row whose value at `index` is `value`. */
  holds(key: string, index: number, value: unknown): boolean {
    return this.batches.get(key)?.rows.some((row) => row.values[index] === value) ?? false;
  }

  /** Row `values` in batch `key` (sent by the first row's `send`); its result. */
  add<T>(key: string, values: readonly unknown[], send: SendBatch): Promise<T> {
    let batch = this.batches.get(key);
    if (!batch) {
      if (this.batches.size === 0) setImmediate(() => void this.sendAll());
      this.batches.set(key, (batch = { rows: [], send }));
    }
    const { rows } = batch;
    return new Promise<T>((resolve, reject) =>
      rows.push({ values, resolve: resolve as (result: unknown) => void, reject }),
    );
  }

  private async sendAll(): Promise<void> {
    const batches = [...this.batches.values()];
    this.batches.clear();
    for (const { rows, send } of batches) {
      try {
        const results = await send(rows.map((row) => row.values));
        rows.forEach((row, index) => row.resolve(results[index]));
      } catch (error) {
        for (const row of rows) row.reject(error);
      }
    }
  }
}
