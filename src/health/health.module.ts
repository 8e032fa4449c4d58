import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { HealthController } from './health.controller';
import { MigrationsHealthIndicator } from './migrations.health';

@Module({
  // Terminus would log every failed check as an error; a failing readiness is expected while
  // the database is away, and its 503 has a line of its own in the request log.
  imports: [TerminusModule.forRoot({ logger: false })],
  controllers: [HealthController],
  providers: [MigrationsHealthIndicator],
})
export class HealthModule {}
