import { Body, Controller, Get, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiCreatedResponse, ApiHeader, ApiOkResponse } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { ApiErrors } from '../common/openapi/api-errors.decorator';
import { ApiResource } from '../common/openapi/api-resource.decorator';
import { ApiPageResponse, setNextLink } from '../common/pagination/next-link';
import { locationHeaderDocs } from '../common/resource-location';
import { responseOf } from '../common/response-of';
import { ApiIdParam, IdPipe } from '../common/validation/id.pipe';
import { IDEMPOTENCY_KEY_HEADER_DOCS, IdempotentRequests } from '../idempotency/idempotent-requests';
import { DEPRECATION_HEADER_DOCS, DEPRECATION_HEADERS } from './deprecation';
import { ListPetsQueryDto } from './dto/list-pets-query.dto';
import { NewPetDto } from './dto/new-pet.dto';
import { PetDto } from './dto/pet.dto';
import { PetEntity } from './pet.entity';
import { PetsService } from './pets.service';

/** The collection's path under /v1, as in `Location` and `Link`. */
const COLLECTION = 'pets';

// Summaries and descriptions come from the doc comments (the @nestjs/swagger plugin); the
// decorators say what it cannot infer: response descriptions, headers and errors.
@ApiResource(
  COLLECTION,
  'The animals of the catalogue: list, add and get them. `getPet` (`GET /pets/{petId}`) is deprecated ' +
    `and will be removed on **5 December 2030**; it keeps working until then (\`Deprecation: ` +
    `${DEPRECATION_HEADERS.Deprecation}\`, \`Sunset: ${DEPRECATION_HEADERS.Sunset}\`). Use \`listPets\` ` +
    'with the `status` filter instead.',
)
@Controller(COLLECTION)
export class PetsController {
  constructor(
    private readonly pets: PetsService,
    private readonly idempotent: IdempotentRequests,
  ) {}

  /**
   * List all animals
   *
   * @remarks A page of at most `limit` animals in ascending id order (oldest first), optionally
   * only those with one `status`. When more animals match, `Link: <...>; rel="next"` points to the
   * next page; following those links walks the whole collection once, with no gaps, also while
   * animals are being added.
   */
  @Get()
  @ApiPageResponse(PetDto, {
    collection: COLLECTION,
    noun: 'animals',
    description: 'Success: the page of animals (Pets).',
    filters: ['status'],
  })
  @ApiErrors([400, 401, 429, 500, 503])
  async listPets(
    @Query() query: ListPetsQueryDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<PetDto[]> {
    const page = await this.pets.list(query);
    setNextLink(res, COLLECTION, { limit: query.limit, status: query.status }, page.nextCursor);
    return responseOf(page.items, (pets) => pets.map((pet) => PetDto.fromEntity(pet)));
  }

  /**
   * Add an animal
   *
   * @remarks The service assigns the `id` and returns the whole animal. The body is a NewPet
   * with no other properties (`id` included).
   */
  @Post()
  @ApiCreatedResponse({
    type: PetDto,
    description: 'Animal added.',
    headers: locationHeaderDocs(COLLECTION, 'animal'),
  })
  @ApiHeader(IDEMPOTENCY_KEY_HEADER_DOCS)
  @ApiErrors([400, 401, 409, 413, 415, 422, 429, 500, 503])
  createPet(
    @Body() newPet: NewPetDto,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<PetDto> {
    return this.idempotent.create(
      req,
      res,
      COLLECTION,
      (inTransaction) => this.pets.create(newPet, inTransaction),
      (pet: PetEntity) => PetDto.fromEntity(pet),
    );
  }

  /**
   * Get an animal by id
   *
   * @remarks Deprecated: removed on 5 December 2030 and working until then. Use `GET /pets`
   * (listPets) with the `status` filter instead. Every response of it, errors included,
   * carries the `Deprecation`, `Sunset` and `Link` headers.
   * @deprecated Use listPets with the `status` filter; removed on 5 December 2030.
   */
  @Get(':petId')
  @ApiIdParam('petId', 'animal')
  @ApiOkResponse({ type: PetDto, description: 'The animal exists.', headers: DEPRECATION_HEADER_DOCS })
  @ApiErrors([400, 401, 404, 429, 500, 503], { headers: DEPRECATION_HEADER_DOCS })
  async getPet(@Param('petId', new IdPipe('petId', 'animal')) petId: number): Promise<PetDto> {
    return responseOf(await this.pets.get(petId), (pet) => PetDto.fromEntity(pet));
  }
}
