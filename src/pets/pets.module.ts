import { MiddlewareConsumer, Module, NestModule, RequestMethod } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { deprecationHeaders } from './deprecation';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { Metrics } from '../observability/metrics';
import { MAX_CACHED_PAGES, PetCache } from './pet-cache';
import { PETS_SCHEMA } from './pets.schema';
import { PetsController } from './pets.controller';
import { PetsService } from './pets.service';

@Module({
  imports: [TypeOrmModule.forFeature([...PETS_SCHEMA.entities]), IdempotencyModule],
  controllers: [PetsController],
  providers: [
    PetsService,
    {
      provide: PetCache,
      inject: [APP_CONFIG, Metrics],
      useFactory: (config: AppConfig, metrics: Metrics) =>
        new PetCache(config.petCacheSize, MAX_CACHED_PAGES, metrics, config.petCacheMegabytes),
    },
  ],
  exports: [PetsService],
})
export class PetsModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(deprecationHeaders).forRoutes({ path: 'pets/:petId', method: RequestMethod.GET });
  }
}
