interface Pending<T, R> {
  item: T;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}

/** Items committed together at most, so that one statement stays well within SQL limits. */
export const MAX_GROUP_SIZE = 256;
/**
 * Groups sent to the database at once. With two, the next group is already waiting at the
 * connection while the answers of the previous one are written, so the database never idles;
 * SQLite still runs them one after the other.
 */
export const MAX_GROUPS_IN_FLIGHT = 2;

/**
 * Group commit: writes that arrive while commits are running wait for one to finish, then go
 * together in the next one, so that N concurrent writes cost one commit (one fsync with
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
  private inFlight = 0;
  private scheduled = false;

  constructor(
    private readonly commit: (items: T[]) => Promise<R[]>,
    private readonly maxGroupSize = MAX_GROUP_SIZE,
    private readonly maxInFlight = MAX_GROUPS_IN_FLIGHT,
  ) {}

  add(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.schedule();
    });
  }

  /** Sends the queue on the next turn of the event loop, as far as commits may start. */
  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.maxInFlight || this.queue.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      while (this.inFlight < this.maxInFlight && this.queue.length > 0) {
        this.inFlight += 1;
        void this.commitGroup(this.queue.splice(0, this.maxGroupSize)).finally(() => {
          this.inFlight -= 1;
          this.schedule();
        });
      }
    });
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
