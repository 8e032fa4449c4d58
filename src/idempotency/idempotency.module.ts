import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { IdempotencyRecordEntity } from './idempotency-record.entity';
import { IdempotencyService } from './idempotency.service';
import { IdempotentRequests } from './idempotent-requests';

/** Idempotent creates: a feature module other modules use through `IdempotentRequests.run`. */
@Module({
  imports: [TypeOrmModule.forFeature([IdempotencyRecordEntity])],
  providers: [IdempotencyService, IdempotentRequests],
  exports: [IdempotencyService, IdempotentRequests],
})
export class IdempotencyModule {}
