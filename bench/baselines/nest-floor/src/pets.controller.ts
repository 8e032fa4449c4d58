import { Body, Controller, Get, Headers, Param, Patch, Post, Query, Res } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import { ApiError } from './api-error';
import { after, Pet, STATUSES, store } from './store';

const INT64_MAX = 2n ** 63n - 1n;

/** Where each status may go besides staying (the service's lifecycle). */
const TRANSITIONS: Record<string, readonly string[]> = {
  available: ['pending', 'sold'],
  pending: ['available', 'sold'],
  sold: [],
};

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

/** The same rules for the properties a merge patch sends; null removes only nothing here. */
function patchProblem(body: unknown): string | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return 'Request body must be a JSON object';
  }
  const { name, categoryId, status, ...rest } = body as Record<string, unknown>;
  if (Object.keys(rest).length > 0) return `${Object.keys(rest)[0]} is not a property of a pet`;
  if (name !== undefined && (typeof name !== 'string' || name.trim() === ''))
    return 'name must be a non-empty string';
  if (categoryId !== undefined && !Number.isSafeInteger(categoryId)) return 'categoryId must be an integer';
  if (status !== undefined && !STATUSES.includes(status as string)) {
    return 'status must be one of available, pending, sold';
  }
  return null;
}

/** The id of a path: 400 if not one, undefined past int64 (no pet has it). */
function idOf(petId: string): number | bigint | undefined {
  if (!/^\d{1,19}$/.test(petId)) {
    throw new ApiError(400, 'invalid_parameter', 'petId must be a positive integer');
  }
  // Ids of 16 digits and more may not fit a double; past int64 no pet can have them.
  const long = petId.length > 15 ? BigInt(petId) : null;
  return long === null ? Number(petId) : long > INT64_MAX ? undefined : long;
}

@Controller('v1/pets')
export class PetsController {
  @Get()
  list(@Query('limit') limit: unknown, @Query('status') status: unknown) {
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
    return store.list(size, status as string | undefined);
  }

  @Get(':petId')
  get(@Param('petId') petId: string, @Res({ passthrough: true }) res: ServerResponse) {
    const id = idOf(petId);
    return after(id === undefined ? undefined : store.find(id), (found) => {
      if (found === undefined) throw new ApiError(404, 'not_found', 'Pet not found');
      res.setHeader('ETag', `"${found.version}"`);
      return found.pet;
    });
  }

  /** 201 (Nest's default for POST) with the pet. No Location header: the floor keeps Nest's bare path. */
  @Post()
  create(@Body() body: unknown) {
    const problem = newPetProblem(body);
    if (problem !== null) throw new ApiError(400, 'invalid_body', problem);
    const { name, categoryId, status } = body as Pet;
    return after(store.insert(name, categoryId, status), (id): Pet => ({ id, name, categoryId, status }));
  }

  /**
   * A merge patch with If-Match (428 without, 412 when stale, `*` any version) along the status
   * lifecycle (409); the row is written only if it is still at the version checked.
   */
  @Patch(':petId')
  update(
    @Param('petId') petId: string,
    @Body() body: unknown,
    @Headers('if-match') ifMatch: string | undefined,
    @Res({ passthrough: true }) res: ServerResponse,
  ) {
    const id = idOf(petId);
    const problem = patchProblem(body);
    if (problem !== null) throw new ApiError(400, 'invalid_body', problem);
    return after(id === undefined ? undefined : store.find(id), (found) => {
      if (found === undefined) throw new ApiError(404, 'not_found', 'Pet not found');
      if (ifMatch === undefined) throw new ApiError(428, 'precondition_required', 'If-Match is required');
      if (ifMatch !== '*' && ifMatch !== `"${found.version}"`) {
        throw new ApiError(412, 'precondition_failed', 'The pet has changed');
      }
      const changed = { ...found.pet, ...(body as Partial<Pet>) };
      const from = found.pet.status;
      if (from !== undefined && changed.status !== from && !TRANSITIONS[from].includes(changed.status!)) {
        throw new ApiError(409, 'invalid_transition', `The status cannot change from ${from}`);
      }
      return after(store.update(changed, found.version), (written) => {
        if (!written) throw new ApiError(412, 'precondition_failed', 'The pet has changed');
        res.setHeader('ETag', `"${found.version + 1}"`);
        return changed;
      });
    });
  }
}
