import { AppError, sendError } from '@platform/errors';
import express, { type RequestHandler } from 'express';
import type { Options as RateLimitOptions } from 'express-rate-limit';

/**
 * JSON body parser whose failures become our errors (malformed -> 422,
 * too large -> 413) through the shared error handler. Only JSON content types
 * are parsed; an empty body on a JSON route is left for validation to refuse.
 */
export function jsonBody(limit: string | number): RequestHandler {
  return express.json({ limit, strict: true, type: ['application/json', 'application/*+json'] });
}

/** express-rate-limit `handler`: our JSON body; Retry-After is set by the limiter. */
export const rateLimitHandler: RateLimitOptions['handler'] = (_req, res, _next, options) => {
  const retryAfter = res.getHeader('Retry-After') ?? String(Math.ceil(options.windowMs / 1000));
  sendError(res, new AppError('rate_limited', { headers: { 'Retry-After': String(retryAfter) } }));
};
