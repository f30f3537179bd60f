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
 * fixes: (the trace span when tracing is on,) request id, metrics, access log (secrets redacted), helmet. Routes and
 * the error handler follow in the service's own createApp.
 */
export function createServiceApp(opts: ServiceAppOptions): { app: Express; metrics: HttpMetrics } {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', opts.trustProxyHops);
  app.set('query parser', 'simple');
  const metrics = opts.metrics ?? createHttpMetrics({ service: opts.service });
  // The request span first, so that it covers the whole request (only while tracing is on: see tracing.ts).
  if (tracingOn()) app.use(traceRequests());
  app.use(requestId());
  app.use(metrics.middleware);
  app.use(httpLogger(opts.logger));
  app.use(helmet());
  return { app, metrics };
}
