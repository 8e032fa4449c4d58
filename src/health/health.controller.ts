import { Controller, Get, ServiceUnavailableException } from '@nestjs/common';
import {
  HealthCheck,
  HealthCheckResult,
  HealthCheckService,
  HealthIndicatorResult,
  HealthIndicatorService,
  TypeOrmHealthIndicator,
} from '@nestjs/terminus';
import { ApiExcludeController } from '@nestjs/swagger';
import { DataSource } from 'typeorm';
import { Public } from '../auth/public.decorator';
import { within } from '../common/within';
import { serviceUnavailable } from '../database/outage';
import { Lifecycle } from '../http/lifecycle';

export const HEALTH_PATH = 'health';

/** A check that has not answered within this time is down: readiness answers in about a second. */
const PROBE_TIMEOUT_MS = 1000;

/** Operational, so not in the API's OpenAPI document (docs/operations.md describes them). */
@ApiExcludeController()
@Public()
@Controller(HEALTH_PATH)
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly database: TypeOrmHealthIndicator,
    private readonly indicator: HealthIndicatorService,
    private readonly dataSource: DataSource,
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
    if (this.lifecycle.draining) throw serviceUnavailable('Not ready: shutting down.');
    try {
      return await this.health.check([
        () => this.database.pingCheck('database', { timeout: PROBE_TIMEOUT_MS }),
        () => this.migrationsApplied(),
      ]);
    } catch (error) {
      if (!(error instanceof ServiceUnavailableException)) throw error;
      const report = error.getResponse() as Partial<HealthCheckResult>;
      const failing = Object.keys(report.error ?? {});
      throw serviceUnavailable(
        failing.length > 0 ? `Not ready: failing checks: ${failing.join(', ')}.` : 'Not ready.',
      );
    }
  }

  private async migrationsApplied(): Promise<HealthIndicatorResult> {
    const check = this.indicator.check('migrations');
    try {
      const pending = await within(this.dataSource.showMigrations(), PROBE_TIMEOUT_MS);
      return pending ? check.down({ message: 'migrations are pending' }) : check.up();
    } catch {
      return check.down({ message: 'cannot read the applied migrations' });
    }
  }
}
