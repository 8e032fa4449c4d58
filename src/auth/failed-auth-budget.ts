import type { ApiException } from '../common/errors/api-exception';

/** The per-address budget of requests without a valid key, which the rate limits provide. */
export interface FailedAuthBudget {
  /** The 429 to answer when `address` has spent its budget, before any key lookup. */
  refusal(address: string): Promise<ApiException | undefined>;
  /** Counts a request from `address` that carried no valid key. */
  failed(address: string): Promise<void>;
}

export const FAILED_AUTH_BUDGET = Symbol('FAILED_AUTH_BUDGET');
