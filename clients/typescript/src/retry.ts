import { PetStoreConnectionError, PetStoreError } from './errors.js';

export interface RetryOptions {
  /** Attempts in all, the first included (default 5; 1 turns retries off). */
  attempts?: number;
  /** The longest all attempts and waits together may take, in milliseconds (default 30 000). */
  totalTimeoutMs?: number;
  /** The first wait when an answer names none (default 200 ms); it doubles on each retry. */
  baseDelayMs?: number;
  /** The longest wait between two attempts that an answer does not ask for (default 5 000 ms). */
  maxDelayMs?: number;
}

const DEFAULTS: Required<RetryOptions> = {
  attempts: 5,
  totalTimeoutMs: 30_000,
  baseDelayMs: 200,
  maxDelayMs: 5_000,
};

/** Answers worth the same request again: the service or a proxy busy or restarting, or a limit. */
const RETRYABLE_STATUSES = new Set([429, 502, 503, 504]);

export interface Attempt<T> {
  /** Resolves with the result, or rejects with a PetStoreError for an error answer. */
  (signal: AbortSignal): Promise<T>;
}

/**
 * Thrown by an attempt that failed before sending anything, to end the retries at once:
 * `withRetries` rejects with `error`, as it was thrown.
 */
export class NotRetried extends Error {
  constructor(readonly error: unknown) {
    super('Not retried.');
  }
}

/**
 * Runs `attempt` until it succeeds, retrying what `retryable` allows (and the statuses above, and
 * requests that got no answer at all) after `Retry-After` or a growing, jittered wait, within the
 * number of attempts and the total time. Safe only for requests that are safe to repeat: reads,
 * and creates that carry one `Idempotency-Key` through every attempt.
 */
export async function withRetries<T>(
  options: RetryOptions | undefined,
  attempt: Attempt<T>,
  retryable: (error: PetStoreError) => boolean = () => false,
): Promise<T> {
  const policy = { ...DEFAULTS, ...options };
  const deadline = Date.now() + policy.totalTimeoutMs;
  for (let tried = 1; ; tried++) {
    const remaining = deadline - Date.now();
    let failure: PetStoreError | PetStoreConnectionError;
    try {
      return await attempt(AbortSignal.timeout(Math.max(1, remaining)));
    } catch (error) {
      if (error instanceof NotRetried) throw error.error;
      if (error instanceof PetStoreError) {
        if (!RETRYABLE_STATUSES.has(error.status) && !retryable(error)) throw error;
        failure = error;
      } else {
        failure = new PetStoreConnectionError(`No answer from the Pet Store API: ${String(error)}`, {
          cause: error,
        });
      }
    }
    const backoff = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (tried - 1));
    const wait =
      failure instanceof PetStoreError && failure.retryAfter !== undefined
        ? failure.retryAfter * 1000
        : backoff * (0.5 + Math.random() / 2);
    if (tried >= policy.attempts || Date.now() + wait >= deadline) throw failure;
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
}
