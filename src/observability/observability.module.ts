import { DynamicModule, Global, Module } from '@nestjs/common';
import type { Logger } from 'pino';
import { MetricsConfig } from '../config/app-config';
import { Metrics } from './metrics';
import { MetricsListener } from './metrics-listener';
import { PinoNestLogger } from './nest-logger';

export const ROOT_LOGGER = Symbol('ROOT_LOGGER');

/** prom-client is loaded only when metrics are on: a smaller heap and a faster start otherwise. */
function createMetrics(config: MetricsConfig): Metrics {
  if (config.port === null) return new Metrics();
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { PrometheusMetrics } = require('./prometheus-metrics') as typeof import('./prometheus-metrics');
  return new PrometheusMetrics();
}

@Global()
@Module({})
export class ObservabilityModule {
  static forRoot(config: MetricsConfig, logger: Logger): DynamicModule {
    return {
      module: ObservabilityModule,
      providers: [
        { provide: ROOT_LOGGER, useValue: logger },
        { provide: PinoNestLogger, useValue: new PinoNestLogger(logger) },
        { provide: Metrics, useValue: createMetrics(config) },
        { provide: MetricsConfig, useValue: config },
        MetricsListener,
      ],
      exports: [ROOT_LOGGER, PinoNestLogger, Metrics, MetricsListener],
    };
  }
}
