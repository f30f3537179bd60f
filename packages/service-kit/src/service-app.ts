import { createHttpMetrics, type HttpMetrics, httpLogger, type Logger, requestId } from '@platform/logging';
import express, { type Express } from 'express';
import helmet from 'helmet';
import { traceRequests, tracingOn } from './tracing';

export type ServiceAppOptions = {
  service: string;
  logger: Logger;
  /** Express `trust proxy`: how many proxy hops to believe in X-Forwarded-For. */
  trustProxyHops: number;
  /** The registry behind /metrics, when the service registers its own metrics on it before the app exists. */
  metrics?: HttpMetrics;
};

/**
 * The head of every service's middleware chain, in the order the architecture
 * fixes: request id, (the trace span when tracing is on,) metrics, access log (secrets redacted), helmet. Routes and
 * the error handler follow in the service's own createApp.
 */
export function createServiceApp(opts: ServiceAppOptions): { app: Express; metrics: HttpMetrics } {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', opts.trustProxyHops);
  app.set('query parser', 'simple');
  const metrics = opts.metrics ?? createHttpMetrics({ service: opts.service });
  // The request id, then the request span (only while tracing is on: see tracing.ts), which
  // keeps its context in the store the request id's middleware has just entered.
  app.use(requestId());
  if (tracingOn()) app.use(traceRequests());
  app.use(metrics.middleware);
  app.use(httpLogger(opts.logger));
  app.use(helmet());
  return { app, metrics };
}
