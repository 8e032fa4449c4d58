interface Pending<T, R> {
  item: T;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}

/** Items committed together at most, so that one group's transaction stays short. */
export const MAX_GROUP_SIZE = 128;
/** Groups sent at once: the next waits at the connection while the last one's answers are written. */
export const MAX_GROUPS_IN_FLIGHT = 2;

/** N concurrent writes cost one commit; `commit` answers each item, or fails them all by throwing. */
export class GroupCommit<T, R> {
  private queue: Pending<T, R>[] = [];
  private inFlight = 0;
  private scheduled = false;

  constructor(
    private readonly commit: (items: T[]) => Promise<PromiseSettledResult<R>[]>,
    private readonly maxGroupSize = MAX_GROUP_SIZE,
    private readonly maxInFlight = MAX_GROUPS_IN_FLIGHT,
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
      group.forEach((pending, index) => {
        const result = results[index];
        if (result.status === 'fulfilled') pending.resolve(result.value);
        else pending.reject(result.reason);
      });
    } catch (error) {
      group.forEach((pending) => pending.reject(error));
    }
  }
}
