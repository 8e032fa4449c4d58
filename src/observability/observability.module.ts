import { DynamicModule, Global, Module } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppConfig } from '../config/app-config';
import { httpMetrics } from './http-metrics';
import { createPrometheusMetrics, isPrometheus, Metrics } from './metrics';
import { MetricsListener } from './metrics-listener';

/**
 * Prometheus metrics (`Metrics`, injected wherever something is counted) and their listener.
 * With METRICS_PORT unset, `Metrics` is the no-op base class and nothing is measured.
 */
@Global()
@Module({})
export class ObservabilityModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: ObservabilityModule,
      providers: [
        {
          provide: Metrics,
          useValue: config.metricsPort === null ? new Metrics() : createPrometheusMetrics(),
        },
        MetricsListener,
      ],
      exports: [Metrics, MetricsListener],
    };
  }
}

/** Times every request when metrics are on; does nothing otherwise. Called by setupApp. */
export function useHttpMetrics(app: NestExpressApplication): void {
  const metrics = app.get(Metrics);
  if (isPrometheus(metrics)) app.use(httpMetrics(metrics));
}
