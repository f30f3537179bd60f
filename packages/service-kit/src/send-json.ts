import type { Response } from 'express';

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * Answers `body` as JSON with the status already set: the same bytes and
 * Content-Type as `res.json`, without Express's ETag. An ETag only serves a
 * later conditional GET, and `res.send` hashes every body to make one; the
 * AI routes answer POSTs, which are never revalidated, so their hot path
 * skips the hash and the body's extra Buffer copy (docs/performance.md).
 * Node sets Content-Length for the single write.
 */
export function sendJson(res: Response, body: unknown): void {
  res.setHeader('Content-Type', JSON_TYPE);
  res.end(JSON.stringify(body));
}
