import { applyDecorators } from '@nestjs/common';
import { Expose, Transform } from 'class-transformer';
import { decimalToNumber } from '../common/validation/int64';
import { IsBoolean, IsIn, IsInt, Matches, Max, Min, ValidateBy, ValidationArguments } from 'class-validator';

// The decorators of the environment schema. A transform types a well-formed string and leaves
// anything else as written, so the check after it quotes what the operator wrote.

/** `(got "value")`, for rules about values that are no secret. */
export const got = (value: unknown): string => `(got "${String(value)}")`;

const names = new WeakMap<object, Map<string, string>>();

/** The environment variable a setting is read from; problems are named after it. */
export function Variable(name: string): PropertyDecorator {
  return (target, property) => {
    Expose({ name })(target, property);
    names.set(target, new Map(names.get(target)).set(String(property), name));
  };
}

/** A slice's settings and the variable of each, in the order declared. */
export function variablesOf(slice: new () => object): ReadonlyMap<string, string> {
  return names.get(slice.prototype as object) ?? new Map<string, string>();
}

const nameOf = ({ object, property }: ValidationArguments): string =>
  names.get(Object.getPrototypeOf(object) as object)?.get(property) ?? property;

const quoting =
  (rule: string) =>
  (args: ValidationArguments): string =>
    `${nameOf(args)} ${rule} ${got(args.value)}`;

/** Plain decimal digits become a number; `-1`, `1e3`, `0x50`, ` 80` stay as written and fail. */
export function Integer(min: number, max: number): PropertyDecorator {
  const message = quoting(`must be an integer from ${min} to ${max}`);
  return applyDecorators(
    Transform(decimalToNumber),
    IsInt({ message }),
    Min(min, { message }),
    Max(max, { message }),
  );
}

/** The one boolean syntax of every flag: `true` or `false`, in any case. */
export function Flag(): PropertyDecorator {
  return applyDecorators(
    Transform(({ value }: { value: unknown }) =>
      typeof value === 'string' && /^(true|false)$/i.test(value) ? value.toLowerCase() === 'true' : value,
    ),
    IsBoolean({ message: quoting('must be true or false') }),
  );
}

export function OneOf(
  values: readonly string[],
  { ignoreCase = false, rule = `must be one of ${values.join(', ')}` } = {},
): PropertyDecorator {
  return applyDecorators(
    Transform(({ value }: { value: unknown }) =>
      ignoreCase && typeof value === 'string'
        ? (values.find((allowed) => allowed.toLowerCase() === value.toLowerCase()) ?? value)
        : value,
    ),
    IsIn(values, { message: quoting(rule) }),
  );
}

export function Matching(pattern: RegExp, rule: string): PropertyDecorator {
  return Matches(pattern, { message: quoting(rule) });
}

export function CommaSeparated(): PropertyDecorator {
  return Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? list(value) : value));
}

export function list(raw: string): string[] {
  return raw
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
}

/** A rule of its own: `problemOf` says what is wrong with the (transformed) value, or undefined. */
export function Satisfies<V, T extends object = object>(
  problemOf: (value: V, variables: T) => string | undefined,
): PropertyDecorator {
  const problem = (args: ValidationArguments) => problemOf(args.value as V, args.object as T);
  return ValidateBy({
    name: problemOf.name,
    validator: {
      validate: (_value: unknown, args?: ValidationArguments) => problem(args!) === undefined,
      defaultMessage: (args?: ValidationArguments) => `${nameOf(args!)} ${problem(args!)}`,
    },
  });
}
