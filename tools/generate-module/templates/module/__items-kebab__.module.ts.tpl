import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { __ITEMS___SCHEMA } from './__items-kebab__.schema';
import { __Items__Controller } from './__items-kebab__.controller';
import { __Items__Service } from './__items-kebab__.service';

/** The __nouns__: `GET` and `POST /v1/__items-kebab__`, `GET /v1/__items-kebab__/{__item__Id}`. */
@Module({
  imports: [TypeOrmModule.forFeature([...__ITEMS___SCHEMA.entities]), IdempotencyModule],
  controllers: [__Items__Controller],
  providers: [__Items__Service],
  exports: [__Items__Service],
})
export class __Items__Module {}
