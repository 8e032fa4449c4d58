import type { ApiException } from '../common/errors/api-exception';

/** Per address, for requests without a valid key; provided by the rate limits. */
export interface FailedAuthBudget {
  refusal(address: string): Promise<ApiException | undefined>;
  failed(address: string): Promise<void>;
}

export const FAILED_AUTH_BUDGET = Symbol('FAILED_AUTH_BUDGET');
