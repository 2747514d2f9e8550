/**
 * Prometheus metrics, served by every process at GET /metrics. Each Nest app has its own registry
 * (never prom-client's global one), so several apps in one process, as in the tests, each report
 * only their own. Global, so any role can inject KairosMetrics to record what it saw.
 */
import { Controller, Get, Global, Header, Module } from '@nestjs/common';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { KairosMetrics } from './kairos-metrics.service.js';
import { PublicRoute } from '../public-route.js';

@PublicRoute()
@Controller('metrics')
export class MetricsController {
  constructor(private readonly registry: Registry) {}

  @Get()
  @Header('Content-Type', Registry.PROMETHEUS_CONTENT_TYPE)
  @Header('Cache-Control', 'no-store')
  scrape(): Promise<string> {
    return this.registry.metrics();
  }
}

@Global()
@Module({
  controllers: [MetricsController],
  providers: [
    {
      provide: Registry,
      useFactory: (): Registry => {
        const registry = new Registry();
        collectDefaultMetrics({ register: registry, prefix: 'kairos_' });
        return registry;
      },
    },
    KairosMetrics,
  ],
  exports: [Registry, KairosMetrics],
})
export class MetricsModule {}
