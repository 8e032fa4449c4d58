import { registerDecorator, ValidationOptions } from 'class-validator';

/** U+0000–U+001F and U+007F. */
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

/** `min`..`max` code points (as JSON Schema counts), not blank, no control character or lone surrogate. */
export function IsCleanText(min: number, max: number, options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'isCleanText',
      target: target.constructor,
      propertyName: propertyName as string,
      options: {
        message: `$property must be a string of ${min} to ${max} characters, not blank, with no control characters`,
        ...options,
      },
      validator: {
        validate(value: unknown): boolean {
          if (typeof value !== 'string') return false;
          if (!value.isWellFormed() || CONTROL_CHARACTER.test(value)) return false;
          if (value.trim() === '') return false;
          let length = 0;
          for (const _ of value) if (++length > max) return false;
          return length >= min;
        },
      },
    });
}
