import { ApiProperty } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsEnum, IsInt, IsString, Matches, Max, MaxLength, Min, ValidateIf } from 'class-validator';
import { PetStatus } from '../pet-status';

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

const LIMIT_RULE = `limit must be an integer from 1 to ${MAX_PAGE_SIZE}`;
const CURSOR_RULE = 'cursor must be the value from a next link';

/**
 * Only plain decimal digits become a number, however many leading zeros they carry (a number too
 * large to be exact is still far above the maximum); anything else stays as sent and fails `@IsInt`.
 */
const decimalToNumber = ({ value }: { value: unknown }): unknown =>
  typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;

export class ListPetsQueryDto {
  /** Maximum number of animals to return (page size). */
  @ApiProperty({
    type: 'integer',
    minimum: 1,
    maximum: MAX_PAGE_SIZE,
    default: DEFAULT_PAGE_SIZE,
    required: false,
  })
  @Transform(decimalToNumber)
  @IsInt({ message: LIMIT_RULE })
  @Min(1, { message: LIMIT_RULE })
  @Max(MAX_PAGE_SIZE, { message: LIMIT_RULE })
  limit: number = DEFAULT_PAGE_SIZE;

  /** Returns only animals with this status. */
  @ApiProperty({ enum: PetStatus, enumName: 'PetStatus', required: false })
  @ValidateIf((_, value) => value !== undefined)
  @IsEnum(PetStatus, { message: 'status must be one of available, pending, sold' })
  status?: PetStatus;

  /**
   * Where the page starts: the opaque value of the `cursor` parameter in the previous page's
   * `Link: <...>; rel="next"` header. Leave it out for the first page.
   */
  @ApiProperty({ required: false, maxLength: 200, pattern: '^[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$' })
  @ValidateIf((_, value) => value !== undefined)
  @IsString({ message: CURSOR_RULE })
  @MaxLength(200, { message: CURSOR_RULE })
  @Matches(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/, { message: CURSOR_RULE })
  cursor?: string;
}
