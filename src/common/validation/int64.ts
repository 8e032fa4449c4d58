import { ValueTransformer } from 'typeorm';

/** The largest integer a JSON number carries exactly in JavaScript (2^53 - 1). */
export const MAX_EXACT_INTEGER = Number.MAX_SAFE_INTEGER;

/** A transform: only plain decimal digits become a number; anything else stays as sent, for its check to refuse. */
export const decimalToNumber = ({ value }: { value: unknown }): unknown =>
  typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;

/** Drivers may hand 64-bit integers back as strings; the values we store stay below 2^53. */
export const int64AsNumber: ValueTransformer = {
  to: (value: number | null | undefined) => value,
  from: (value: string | number | null) => (value === null ? null : Number(value)),
};
