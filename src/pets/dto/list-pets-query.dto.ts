import { ApiProperty } from '@nestjs/swagger';
import { IsEnum, ValidateIf } from 'class-validator';
import { DEFAULT_PAGE_SIZE, PageCursorParam, PageLimit } from '../../common/pagination/page-query';
import { PetStatus } from '../pet-status';

export class ListPetsQueryDto {
  /** Maximum number of animals to return (page size). */
  @PageLimit()
  limit: number = DEFAULT_PAGE_SIZE;

  /** Returns only animals with this status. */
  @ApiProperty({ enum: PetStatus, enumName: 'PetStatus', required: false })
  @ValidateIf((_, value) => value !== undefined)
  @IsEnum(PetStatus, { message: 'status must be one of available, pending, sold' })
  status?: PetStatus;

  /**
   * Where the page starts: the opaque value of the `cursor` parameter in the previous page's
   * `Link: <...>; rel="next"` header. Leave it out for the first page. A value the service did
   * not give out, or gave out for another filter, is 400 (a rule no schema can state).
   */
  @PageCursorParam()
  cursor?: string;
}
