import cluster from 'node:cluster';
import { AppError } from '@platform/errors';
import type { RequestHandler } from 'express';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { metricsFromPrimary, reportToPrimary } from './cluster-metrics';

/** Re-exported so apps add their own metrics to the same registry without depending on prom-client. */
export { Counter, Gauge, Histogram, Registry };

export type HttpMetrics = {
  registry: Registry;
  /** Counts and times every request by method, route template and status. */
  middleware: RequestHandler;
  /**
   * Serves the registry in Prometheus text format. In a cluster worker, the
   * whole service's metrics (every worker's registry summed, collected by the
   * primary); 503 when the primary does not answer in time.
   */
  handler: RequestHandler;
};

/**
 * One registry per app instance, so two apps in one process (tests) never
 * collide. In a cluster worker (one app per process) it is the registry the
 * worker reports to the primary.
 */
export function createHttpMetrics(opts: { service: string; defaultMetrics?: boolean }): HttpMetrics {
  const registry = new Registry();
  const inCluster = cluster.isWorker;
  if (inCluster) reportToPrimary(registry);
  registry.setDefaultLabels({ service: opts.service });
  if (opts.defaultMetrics !== false) collectDefaultMetrics({ register: registry });
  const requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests by method, route and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency by method, route and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });
  const middleware: RequestHandler = (req, res, next) => {
    const start = process.hrtime.bigint();
    res.once('finish', () => {
      // The route template, never the raw URL, keeps label cardinality bounded.
      const route = req.route?.path ? `${req.baseUrl}${String(req.route.path)}` : 'unmatched';
      const labels = { method: req.method, route, status: String(res.statusCode) };
      requests.inc(labels);
      duration.observe(labels, Number(process.hrtime.bigint() - start) / 1e9);
    });
    next();
  };
  const handler: RequestHandler = async (_req, res) => {
    let text: string;
    try {
      text = inCluster ? await metricsFromPrimary() : await registry.metrics();
    } catch (err) {
      if (!inCluster) throw err;
      throw new AppError('service_unavailable', { cause: err });
    }
    res.setHeader('Content-Type', registry.contentType);
    res.send(text);
  };
  return { registry, middleware, handler };
}
