import { Body, Controller, Get, Param, Post, Query, Res } from '@nestjs/common';
import type { Response } from 'express';
import { API_PREFIX } from '../common/http/api-prefix';
import { ListPetsQueryDto } from './dto/list-pets-query.dto';
import { NewPetDto } from './dto/new-pet.dto';
import { PetDto } from './dto/pet.dto';
import { PetIdPipe } from './pet-id.pipe';
import { PetEntity } from './pet.entity';
import { PetsService } from './pets.service';

@Controller('pets')
export class PetsController {
  /** Response bodies of the pages the service hands out again (its cached pages). */
  private readonly bodies = new WeakMap<readonly PetEntity[], PetDto[]>();

  constructor(private readonly pets: PetsService) {}

  /** List all animals: a page of at most `limit`, in ascending id order. */
  @Get()
  async listPets(@Query() query: ListPetsQueryDto): Promise<PetDto[]> {
    const pets = await this.pets.list(query);
    let body = this.bodies.get(pets);
    if (!body) {
      body = pets.map((pet) => PetDto.fromEntity(pet));
      this.bodies.set(pets, body);
    }
    return body;
  }

  /** Add an animal. */
  @Post()
  async createPet(@Body() newPet: NewPetDto, @Res({ passthrough: true }) res: Response): Promise<PetDto> {
    const pet = PetDto.fromEntity(await this.pets.create(newPet));
    res.location(`/${API_PREFIX}/pets/${pet.id}`);
    return pet;
  }

  /** Get an animal by id. Deprecated: use listPets with the status filter; removed on 5 December 2030. */
  @Get(':petId')
  async getPet(@Param('petId', PetIdPipe) petId: number | null): Promise<PetDto> {
    return PetDto.fromEntity(await this.pets.get(petId));
  }
}
