interface Pending<T, R> {
  item: T;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}

/** Items committed together at most, so that one statement stays well within SQL limits. */
export const MAX_GROUP_SIZE = 256;

/**
 * Group commit: writes that arrive while a commit is running wait for it, then go together in
 * the next one, so that N concurrent writes cost one commit (one fsync with
 * synchronous=FULL, one driver round trip) instead of N. A lone write is committed at once
 * (after the current event-loop turn, which gathers the requests that arrived together).
 *
 * Each caller's promise settles only when the commit holding its item has finished: "resolved"
 * still means "committed". `commit` must be atomic (one statement or one transaction) and
 * return one result per item, in order. If it fails, every caller of the group gets the error
 * and nothing of the group was stored; the group is not retried item by item, because a
 * failure reported after the data was written would then store it twice. (Items are
 * validated before they get here, so a group fails for database reasons, which a retry of
 * its items would meet as well.)
 */
export class GroupCommit<T, R> {
  private queue: Pending<T, R>[] = [];
  private running = false;

  constructor(
    private readonly commit: (items: T[]) => Promise<R[]>,
    private readonly maxGroupSize = MAX_GROUP_SIZE,
  ) {}

  add(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.running) {
        this.running = true;
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const group = this.queue.splice(0, this.maxGroupSize);
      await this.commitGroup(group);
    }
    this.running = false;
  }

  private async commitGroup(group: Pending<T, R>[]): Promise<void> {
    try {
      const results = await this.commit(group.map((pending) => pending.item));
      group.forEach((pending, index) => pending.resolve(results[index]));
    } catch (error) {
      group.forEach((pending) => pending.reject(error));
    }
  }
}
