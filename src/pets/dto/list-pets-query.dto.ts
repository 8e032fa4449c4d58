import { ApiProperty } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsEnum, IsInt, Max, Min, ValidateIf } from 'class-validator';
import { PetStatus } from '../pet-status';

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

const LIMIT_RULE = `limit must be an integer from 1 to ${MAX_PAGE_SIZE}`;

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
}
