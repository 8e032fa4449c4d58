import { MiddlewareConsumer, Module, NestModule, RequestMethod } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { deprecationHeaders } from './deprecation';
import { PETS_SCHEMA } from './pets.schema';
import { PetsController } from './pets.controller';
import { PetsService } from './pets.service';

/** The animals: `GET` and `POST /v1/pets`, and the deprecated `GET /v1/pets/{petId}`. */
@Module({
  imports: [TypeOrmModule.forFeature([...PETS_SCHEMA.entities]), IdempotencyModule],
  controllers: [PetsController],
  providers: [PetsService],
  exports: [PetsService],
})
export class PetsModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(deprecationHeaders).forRoutes({ path: 'pets/:petId', method: RequestMethod.GET });
  }
}
