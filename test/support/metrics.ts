import { PerformanceObserver } from 'node:perf_hooks';
import { NestExpressApplication } from '@nestjs/platform-express';
import { MetricsListener } from '../../src/observability/metrics-listener';

/** The text the metrics listener serves, checked to be Prometheus's text format. */
export async function scrape(app: NestExpressApplication): Promise<string> {
  const url = app.get(MetricsListener).url();
  if (!url) throw new Error('no metrics listener');
  const response = await fetch(url);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return response.text();
}

/** The value of one sample in the text format, e.g. `petstore_auth_failures_total{reason="missing"}`. */
export function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/**
 * Allocates short-lived garbage until the collector has run at least once, and lets the GC
 * observer hear of it: the GC histogram has a sample only once a collection happened after the
 * metrics started, which a short test may not cause by itself.
 */
export async function garbageCollected(): Promise<void> {
  let collected = false;
  const observer = new PerformanceObserver(() => (collected = true));
  observer.observe({ entryTypes: ['gc'] });
  try {
    for (let round = 0; round < 200 && !collected; round++) {
      // About 1 MB of arrays, garbage at once.
      Array.from({ length: 20_000 }, (_, i) => [i, i]);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  } finally {
    observer.disconnect();
  }
  expect(collected).toBe(true);
}
