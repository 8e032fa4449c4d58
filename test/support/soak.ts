/**
 * `SOAK=<n>` (as `npm run test:soak` sets it) multiplies the runs of the property tests and the
 * waves of the concurrency test, and their time limits; `npm test` runs them once (n = 1).
 */
export const SOAK = Math.max(1, Math.floor(Number(process.env.SOAK)) || 1);
