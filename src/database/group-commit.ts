interface Pending<T, R> {
  item: T;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}

/** Items committed together at most, so that one statement stays well within SQL limits. */
export const MAX_GROUP_SIZE = 256;
/** Groups sent at once: the next waits at the connection while the last one's answers are written. */
export const MAX_GROUPS_IN_FLIGHT = 2;

/** N concurrent writes cost one commit; `retryAlone` names only errors sure to have written nothing. */
export class GroupCommit<T, R> {
  private queue: Pending<T, R>[] = [];
  private inFlight = 0;
  private scheduled = false;

  constructor(
    private readonly commit: (items: T[]) => Promise<R[]>,
    private readonly maxGroupSize = MAX_GROUP_SIZE,
    private readonly maxInFlight = MAX_GROUPS_IN_FLIGHT,
    private readonly retryAlone: (error: unknown) => boolean = () => false,
  ) {}

  add(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.schedule();
    });
  }

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
      if (group.length > 1 && this.retryAlone(error)) {
        for (const pending of group) await this.commitGroup([pending]);
        return;
      }
      group.forEach((pending) => pending.reject(error));
    }
  }
}
