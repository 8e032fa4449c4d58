import type { ApiException } from '../common/errors/api-exception';

/** Per address, for requests without a valid key; provided by the rate limits. */
export interface FailedAuthBudget {
  /**
   * Spends one unit of the address's budget, before any key is looked up, in one atomic step of
   * the counter store: concurrent requests cannot overrun it. The refusal once it is spent, else
   * what gives the unit back (the key was valid after all) to the store that took it.
   */
  reserve(address: string): Promise<ApiException | Refund>;
}

export type Refund = () => Promise<void>;

export const FAILED_AUTH_BUDGET = Symbol('FAILED_AUTH_BUDGET');
