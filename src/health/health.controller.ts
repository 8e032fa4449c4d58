import { Controller, Get, ServiceUnavailableException } from '@nestjs/common';
import { HealthCheck, HealthCheckResult, HealthCheckService, TypeOrmHealthIndicator } from '@nestjs/terminus';
import { ApiOkResponse, ApiOperation, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import { Public } from '../auth/public.decorator';
import { ApiException } from '../common/errors/api-exception';
import { ErrorDto } from '../common/errors/error.dto';
import { OUTAGE_RETRY_AFTER_SECONDS } from '../database/outage';
import { MigrationsHealthIndicator } from './migrations.health';

export const HEALTH_PATH = 'health';

/** A check that has not answered within this time is down: readiness answers in about a second. */
export const PROBE_TIMEOUT_MS = 1000;

const CHECK_REPORT = {
  type: 'object',
  additionalProperties: {
    type: 'object',
    required: ['status'],
    properties: { status: { type: 'string', enum: ['up', 'down'] } },
    additionalProperties: true,
  },
};

const HEALTHY = {
  description: 'Healthy.',
  schema: {
    type: 'object',
    required: ['status', 'info', 'error', 'details'],
    properties: {
      status: { type: 'string', enum: ['ok'] },
      info: CHECK_REPORT,
      error: CHECK_REPORT,
      details: CHECK_REPORT,
    },
    example: {
      status: 'ok',
      info: { database: { status: 'up' }, migrations: { status: 'up' } },
      error: {},
      details: { database: { status: 'up' }, migrations: { status: 'up' } },
    },
  },
};

// Probes live outside /v1 and need no key: each operation overrides the document's servers and security.
const PROBE = {
  servers: [{ url: '/', description: 'This instance (probes are outside /v1)' }],
  security: [],
};

/** Probes for orchestrators and load balancers. Public: no API key. */
@ApiTags('health')
@Public()
@Controller(HEALTH_PATH)
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly database: TypeOrmHealthIndicator,
    private readonly migrations: MigrationsHealthIndicator,
  ) {}

  @ApiOperation({
    ...PROBE,
    operationId: 'liveness',
    summary: 'Liveness: the process is up and answering',
    description: 'Checks nothing else: restart the instance only when this fails.',
  })
  @ApiOkResponse(HEALTHY)
  @HealthCheck({ noCache: false, swaggerDocumentation: false })
  @Get('live')
  live(): Promise<HealthCheckResult> {
    return this.health.check([]);
  }

  @ApiOperation({
    ...PROBE,
    operationId: 'readiness',
    summary: 'Readiness: the database answers and every migration is applied',
    description: 'Send traffic to the instance only while this is 200.',
  })
  @ApiOkResponse(HEALTHY)
  @ApiServiceUnavailableResponse({
    description: 'Not ready: the message names the failing checks.',
    type: ErrorDto,
    headers: {
      'Retry-After': {
        description: 'Seconds until the probe is worth asking again (delay-seconds, RFC 9110).',
        required: true,
        schema: { type: 'string', pattern: '^[0-9]+$', example: '2' },
      },
    },
  })
  @HealthCheck({ noCache: false, swaggerDocumentation: false })
  @Get('ready')
  async ready(): Promise<HealthCheckResult> {
    try {
      return await this.health.check([
        () => this.database.pingCheck('database', { timeout: PROBE_TIMEOUT_MS }),
        () => this.migrations.isApplied('migrations', PROBE_TIMEOUT_MS),
      ]);
    } catch (error) {
      if (!(error instanceof ServiceUnavailableException)) throw error;
      const report = error.getResponse() as Partial<HealthCheckResult>;
      const failing = Object.keys(report.error ?? {});
      throw new ApiException(
        'service_unavailable',
        failing.length > 0 ? `Not ready: failing checks: ${failing.join(', ')}.` : 'Not ready.',
        undefined,
        { 'Retry-After': String(OUTAGE_RETRY_AFTER_SECONDS) },
      );
    }
  }
}
