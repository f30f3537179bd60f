import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import type { Logger } from 'pino';
import { pinoHttp } from 'pino-http';

/**
 * Access log: one line per request with method, route, status and latency.
 * Headers are logged (secret ones are redacted by the logger); bodies never are.
 */
export function httpLogger(logger: Logger, opts: { ignorePaths?: string[] } = {}): RequestHandler {
  const ignore = new Set(opts.ignorePaths ?? ['/health', '/metrics']);
  return pinoHttp({
    logger,
    genReqId: (_req: IncomingMessage, res: ServerResponse) =>
      String((res as ServerResponse & { locals?: { requestId?: string } }).locals?.requestId ?? ''),
    autoLogging: { ignore: (req) => ignore.has((req.url ?? '').split('?')[0] ?? '') },
    customLogLevel: (_req, res, err) =>
      err || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info',
    quietReqLogger: true,
    serializers: {
      req: (req: {
        method: string;
        url: string;
        headers: Record<string, unknown>;
        remoteAddress?: string;
      }) => ({
        method: req.method,
        url: req.url,
        headers: req.headers,
        remoteAddress: req.remoteAddress,
      }),
      // Response headers are mostly helmet's constants; the status is what matters.
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
    },
  }) as unknown as RequestHandler;
}
