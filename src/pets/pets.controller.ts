import { Body, Controller, Headers, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ifMatch, setEtag } from '../common/conditional-requests';
import type { ModuleErrorCode } from '../common/errors/error-codes';
import { ApiResource } from '../common/openapi/api-resource.decorator';
import {
  CreateOperation,
  GetOperation,
  IdParam,
  ListOperation,
  Resource,
  UpdateOperation,
} from '../common/openapi/operations';
import { setNextLink } from '../common/pagination/next-link';
import { responseOf } from '../common/response-of';
import { Transactions } from '../database/transactions';
import { IdempotentRequests } from '../idempotency/idempotent-requests';
import { GET_PET_DEPRECATION } from './deprecation';
import { PetEntity } from './pet.entity';
import { PET_LIFECYCLE } from './pet-status';
import { PetsService } from './pets.service';
import { PetDto } from './dto/pet.dto';
import { ListPetsQueryDto } from './dto/list-pets-query.dto';
import { NewPetDto } from './dto/new-pet.dto';
import { UpdatePetDto } from './dto/update-pet.dto';

/** Its path under /v1 (in `Location` and `Link`, and its OpenAPI tag), its id, and its words. */
const PETS: Resource = { collection: 'pets', param: 'petId', noun: 'animal', nouns: 'animals' };
/** The module's own codes that a create or an update may answer (`declareErrorCodes`). */
const MODULE_ERRORS: ModuleErrorCode[] = [];

@ApiResource(
  PETS.collection,
  'The animals of the catalogue: list, add, get and change them. `getPet` (`GET /pets/{petId}`) is ' +
    `deprecated and will be removed on **${GET_PET_DEPRECATION.sunsetDay}**; it keeps working until then ` +
    `(\`Deprecation: ${GET_PET_DEPRECATION.headers.Deprecation}\`, \`Sunset: ${GET_PET_DEPRECATION.headers.Sunset}\`). ` +
    'Use `listPets` with the `status` filter instead.',
)
@Controller(PETS.collection)
export class PetsController {
  constructor(
    private readonly pets: PetsService,
    private readonly idempotent: IdempotentRequests,
    private readonly transactions: Transactions,
  ) {}

  /**
   * List all animals
   *
   * @remarks A page of at most `limit` animals in ascending id order (oldest first), optionally
   * only those with one `status`. When more match, `Link: <...>; rel="next"` points to the next
   * page; following those links walks the whole collection once, with no gaps, also while
   * animals are being added.
   */
  @ListOperation(PetDto, PETS, ['status'])
  async listPets(
    @Query() query: ListPetsQueryDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<PetDto[]> {
    const page = await this.pets.list(query);
    setNextLink(res, PETS.collection, { limit: query.limit, status: query.status }, page.nextCursor);
    return responseOf(page.items, (pets) => pets.map((pet) => PetDto.fromEntity(pet)));
  }

  /**
   * Add an animal
   *
   * @remarks The service assigns the `id` and returns the whole animal. The body is a
   * NewPet with no other properties (`id` included).
   */
  @CreateOperation(PetDto, PETS, { versioned: true, errors: MODULE_ERRORS })
  createPet(
    @Body() newPet: NewPetDto,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<PetDto> {
    return this.idempotent.create(
      req,
      res,
      PETS.collection,
      (work) => this.pets.create(newPet, work),
      (pet: PetEntity) => PetDto.fromEntity(setEtag(res, pet)),
    );
  }

  /**
   * Get an animal by id
   *
   * @remarks The animal with this `id` as it is now, its version in `ETag`; 404 when there is none.
   * Deprecated: removed on 5 December 2030 and working until then. Use `GET /pets` (listPets) with
   * the `status` filter instead. Every response of it, errors included, carries the
   * `Deprecation`, `Sunset` and `Link` headers.
   * @deprecated Use listPets with the `status` filter; removed on 5 December 2030.
   */
  @GetOperation(PetDto, PETS, { versioned: true, headers: GET_PET_DEPRECATION.docs })
  async getPet(@IdParam(PETS) id: number, @Res({ passthrough: true }) res: Response): Promise<PetDto> {
    return responseOf(setEtag(res, await this.pets.get(id)), (pet) => PetDto.fromEntity(pet));
  }

  /**
   * Change an animal
   *
   * @remarks A JSON merge patch (RFC 7396) of the animal: the properties sent change, `null`
   * removes an optional one. `If-Match` must name its current `ETag` (from a get, the create or
   * the last change), so that no change is lost to another made meanwhile. A patch that changes
   * nothing answers the animal as it is, its version unchanged.
   */
  @UpdateOperation(PetDto, UpdatePetDto, PETS, { errors: MODULE_ERRORS, lifecycle: PET_LIFECYCLE })
  async updatePet(
    @IdParam(PETS) id: number,
    @Body() patch: UpdatePetDto,
    @Headers('if-match') condition: string | undefined,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<PetDto> {
    const updated = await this.transactions.run(
      (work) => this.pets.update(id, patch, ifMatch(condition, true), work),
      req,
    );
    return responseOf(setEtag(res, updated), (pet) => PetDto.fromEntity(pet));
  }
}
