import { Body, Controller, Get, Param, Post, Query } from '@nestjs/common';
import { ApiError } from './api-error';
import { findPet, insert, listPets, Pet, STATUSES } from './store';

const INT64_MAX = 2n ** 63n - 1n;

/** Why `body` is not a NewPet, or null when it is one (the rules of every baseline). */
function newPetProblem(body: unknown): string | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return 'Request body must be a JSON object';
  }
  const { name, categoryId, status } = body as Record<string, unknown>;
  if (name === undefined) return 'name is required';
  if (typeof name !== 'string' || name.trim() === '') return 'name must be a non-empty string';
  if (categoryId === undefined) return 'categoryId is required';
  if (!Number.isSafeInteger(categoryId)) return 'categoryId must be an integer';
  if (status !== undefined && !STATUSES.includes(status as string)) {
    return 'status must be one of available, pending, sold';
  }
  return null;
}

@Controller('v1/pets')
export class PetsController {
  @Get()
  list(@Query('limit') limit: unknown, @Query('status') status: unknown): Pet[] {
    if (limit !== undefined && (typeof limit !== 'string' || !/^\d{1,3}$/.test(limit))) {
      throw new ApiError(400, 'invalid_parameter', 'limit must be an integer between 1 and 100');
    }
    const size = limit === undefined ? 20 : Number(limit);
    if (size < 1 || size > 100) {
      throw new ApiError(400, 'invalid_parameter', 'limit must be an integer between 1 and 100');
    }
    if (status !== undefined && !STATUSES.includes(status as string)) {
      throw new ApiError(400, 'invalid_parameter', 'status must be one of available, pending, sold');
    }
    return listPets(size, status as string | undefined);
  }

  @Get(':petId')
  get(@Param('petId') petId: string): Pet {
    if (!/^\d{1,19}$/.test(petId)) {
      throw new ApiError(400, 'invalid_parameter', 'petId must be a positive integer');
    }
    // Ids of 16 digits and more may not fit a double; past int64 no pet can have them.
    const long = petId.length > 15 ? BigInt(petId) : null;
    const pet = long === null ? findPet(Number(petId)) : long > INT64_MAX ? undefined : findPet(long);
    if (pet === undefined) throw new ApiError(404, 'not_found', 'Pet not found');
    return pet;
  }

  /** 201 (Nest's default for POST) with the pet. No Location header: the floor keeps Nest's bare path. */
  @Post()
  create(@Body() body: unknown): Pet {
    const problem = newPetProblem(body);
    if (problem !== null) throw new ApiError(400, 'invalid_body', problem);
    const { name, categoryId, status } = body as Pet;
    return { id: insert(name, categoryId, status), name, categoryId, status };
  }
}
