import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { IDEMPOTENCY_SCHEMA } from './idempotency.schema';
import { IdempotencyService } from './idempotency.service';
import { IdempotentRequests } from './idempotent-requests';

@Module({
  imports: [TypeOrmModule.forFeature([...IDEMPOTENCY_SCHEMA.entities])],
  providers: [IdempotencyService, IdempotentRequests],
  exports: [IdempotencyService, IdempotentRequests],
})
export class IdempotencyModule {}
