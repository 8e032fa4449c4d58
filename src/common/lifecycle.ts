import { ApiException } from './errors/api-exception';

const NONE = '(none)';

/** One table for the check of every change and the document; a state, once given, is never removed. */
export class Lifecycle<S extends string> {
  constructor(
    readonly states: readonly S[],
    /** Where each state may go next; a state may always stay as it is, and one that may go nowhere is final. */
    private readonly transitions: Readonly<Record<S, readonly S[]>>,
    private readonly aNoun: string,
    /** What a record created without a state gets; null: none, until it is given one. */
    readonly initial: S | null,
  ) {
    for (const [from, targets] of Object.entries(transitions) as [S, readonly S[]][]) {
      const unknown = [from, ...targets].find((state) => !states.includes(state));
      if (unknown !== undefined) throw new Error(`lifecycle of ${aNoun}: ${unknown} is not a state`);
    }
  }

  allows(from: S | null, to: S | null): boolean {
    if (from === to || from === null) return true;
    return to !== null && (this.transitions[from] ?? []).includes(to);
  }

  /** `to` undefined: unchanged. */
  check(from: S | null, to: S | null | undefined): void {
    if (to === undefined || this.allows(from, to)) return;
    const cause = to === null ? 'a status, once given, is never removed' : this.onward(from);
    throw new ApiException(
      'invalid_transition',
      `The status of ${this.aNoun} cannot change from ${from ?? NONE} to ${to ?? NONE}: ${cause}.`,
    );
  }

  /** Whether some change is refused (then `invalid_transition` can be answered): removing a state is. */
  get restricts(): boolean {
    return (
      this.initial === null || this.states.some((from) => this.states.some((to) => !this.allows(from, to)))
    );
  }

  table(): string {
    const rows = [...(this.initial === null ? [null] : []), ...this.states].map(
      (from) =>
        `| ${from ?? NONE} | ${this.states.map((to) => (from === to ? '(same)' : this.allows(from, to) ? 'yes' : 'no')).join(' | ')} |`,
    );
    return [
      `| from \\ to | ${this.states.join(' | ')} |`,
      `|---|${'---|'.repeat(this.states.length)}`,
      ...rows,
    ].join('\n');
  }

  private onward(from: S | null): string {
    const targets = from === null ? this.states : (this.transitions[from] ?? []);
    return targets.length === 0
      ? `${from} is final`
      : `from ${from} it may change only to ${targets.join(' or ')}`;
  }
}
