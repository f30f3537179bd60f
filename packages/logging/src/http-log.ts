import type { RequestHandler, Response } from 'express';
import type { Logger } from 'pino';

/** Extra fields a route adds to its request's access-log line (e.g. the upstream that answered). */
export function addAccessLogFields(res: Response, fields: Record<string, unknown>): void {
  const locals = res.locals as { accessLog?: Record<string, unknown> };
  locals.accessLog = locals.accessLog ? Object.assign(locals.accessLog, fields) : { ...fields };
}

/**
 * Access log: exactly one line per request, written when the response is
 * finished (or the connection closed first), with the request id, method,
 * URL, client address, status and latency, plus whatever the route added
 * with `addAccessLogFields`. No request or response headers and never a body:
 * the line is cheap to build and carries nothing a client sent in a header.
 * Level: info below 400, warn for 4xx, 503 and 504, error for other 5xx; a request the client
 * abandoned is logged at info with `aborted: true`. A response that went out
 * as 200 but ended with an error inside its body (a stream's error event) is
 * told by the route with a `stream_error` field: logged at warn as "request
 * failed in band", never as completed. Query strings go through the logger's
 * redaction like every line.
 */
export function httpLogger(logger: Logger, opts: { ignorePaths?: string[] } = {}): RequestHandler {
  const ignore = new Set(opts.ignorePaths ?? ['/health', '/metrics']);
  return (req, res, next) => {
    if (ignore.has(req.path)) {
      next();
      return;
    }
    const started = performance.now();
    const method = req.method;
    const url = req.originalUrl;
    res.once('close', () => {
      const status = res.statusCode;
      const aborted = !res.writableFinished;
      const line: Record<string, unknown> = {
        request_id: res.locals.requestId,
        // req.ip: the client address behind the trusted proxies (TRUST_PROXY_HOPS), the socket's without.
        req: { method, url, remoteAddress: req.ip ?? req.socket.remoteAddress },
        res: { statusCode: status },
        responseTime: Math.round((performance.now() - started) * 100) / 100,
      };
      if (aborted) line.aborted = true;
      const extra = (res.locals as { accessLog?: Record<string, unknown> }).accessLog;
      if (extra) Object.assign(line, extra);
      if (extra?.stream_error !== undefined && !aborted) {
        logger.warn(line, 'request failed in band');
        return;
      }
      // 503 and 504 are expected states (a dependency down, an upstream too slow), logged at warn.
      if (status >= 500 && status !== 503 && status !== 504 && !aborted)
        logger.error(line, 'request errored');
      else if (status >= 400 && !aborted) logger.warn(line, 'request completed');
      else logger.info(line, aborted ? 'request aborted' : 'request completed');
    });
    next();
  };
}
