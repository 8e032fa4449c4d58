import { Controller, Get, ServiceUnavailableException } from '@nestjs/common';
import { HealthCheck, HealthCheckResult, HealthCheckService, TypeOrmHealthIndicator } from '@nestjs/terminus';
import { ApiExcludeController } from '@nestjs/swagger';
import { Public } from '../auth/public.decorator';
import { ApiException } from '../common/errors/api-exception';
import { OUTAGE_RETRY_AFTER_SECONDS } from '../database/outage';
import { Lifecycle } from '../http/lifecycle';
import { MigrationsHealthIndicator } from './migrations.health';

export const HEALTH_PATH = 'health';

const notReady = (message: string) =>
  new ApiException('service_unavailable', message, undefined, {
    'Retry-After': String(OUTAGE_RETRY_AFTER_SECONDS),
  });

/** A check that has not answered within this time is down: readiness answers in about a second. */
export const PROBE_TIMEOUT_MS = 1000;

/** Operational, so not in the API's OpenAPI document (docs/operations.md describes them). */
@ApiExcludeController()
@Public()
@Controller(HEALTH_PATH)
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly database: TypeOrmHealthIndicator,
    private readonly migrations: MigrationsHealthIndicator,
    private readonly lifecycle: Lifecycle,
  ) {}

  @HealthCheck({ noCache: false, swaggerDocumentation: false })
  @Get('live')
  live(): Promise<HealthCheckResult> {
    return this.health.check([]);
  }

  @HealthCheck({ noCache: false, swaggerDocumentation: false })
  @Get('ready')
  async ready(): Promise<HealthCheckResult> {
    if (this.lifecycle.draining) throw notReady('Not ready: shutting down.');
    try {
      return await this.health.check([
        () => this.database.pingCheck('database', { timeout: PROBE_TIMEOUT_MS }),
        () => this.migrations.isApplied('migrations', PROBE_TIMEOUT_MS),
      ]);
    } catch (error) {
      if (!(error instanceof ServiceUnavailableException)) throw error;
      const report = error.getResponse() as Partial<HealthCheckResult>;
      const failing = Object.keys(report.error ?? {});
      throw notReady(failing.length > 0 ? `Not ready: failing checks: ${failing.join(', ')}.` : 'Not ready.');
    }
  }
}
