import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { IdempotencyModule } from '../idempotency/idempotency.module';
// @each reference
import { __RefsModule__ } from '../__ref_folder__/__ref_folder__.module';
// @end
import { __ITEMS___SCHEMA } from './__items-kebab__.schema';
import { __Items__Controller } from './__items-kebab__.controller';
import { __Items__Service } from './__items-kebab__.service';

/** The __nouns__ at `/v1/__items-kebab__`; other modules use them through the exported service. */
@Module({
  imports: [
    TypeOrmModule.forFeature([...__ITEMS___SCHEMA.entities]),
    IdempotencyModule,
    // @each reference
    __RefsModule__,
    // @end
  ],
  controllers: [__Items__Controller],
  providers: [__Items__Service],
  exports: [__Items__Service],
})
export class __Items__Module {}
