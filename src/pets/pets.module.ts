import { MiddlewareConsumer, Module, NestModule, RequestMethod } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { deprecationHeaders } from './deprecation';
import { PETS_SCHEMA } from './pets.schema';
import { PetsController } from './pets.controller';
import { PetsService } from './pets.service';

/** The animals at `/v1/pets`; other modules use them through the exported service. */
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
