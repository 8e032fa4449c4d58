import type { ApiException } from '../common/errors/api-exception';

/** Per address, provided by the rate limits: one atomic step of the counter store, so none overrun it. */
export interface FailedAuthBudget {
  reserve(address: string): Promise<ApiException | Refund>;
}

export type Refund = () => Promise<void>;

export const FAILED_AUTH_BUDGET = Symbol('FAILED_AUTH_BUDGET');
