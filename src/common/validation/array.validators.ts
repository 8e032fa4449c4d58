import { applyDecorators } from '@nestjs/common';
import { ArrayMaxSize, ArrayMinSize, IsArray, Matches } from 'class-validator';

/** 1 to `max` strings, each matching `pattern`: any other value is refused with `rule`. */
export function EachMatching(pattern: RegExp, max: number, rule: string): PropertyDecorator {
  return applyDecorators(
    IsArray({ message: rule }),
    ArrayMinSize(1, { message: rule }),
    ArrayMaxSize(max, { message: rule }),
    Matches(pattern, { each: true, message: rule }),
  );
}
