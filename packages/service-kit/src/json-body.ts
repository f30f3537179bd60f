import express, { type RequestHandler } from 'express';

/**
 * JSON body parser whose failures become our errors (malformed -> 422,
 * too large -> 413) through the shared error handler. Only JSON content types
 * are parsed; an empty body on a JSON route is left for validation to refuse.
 */
export function jsonBody(limit: string | number): RequestHandler {
  return express.json({ limit, strict: true, type: ['application/json', 'application/*+json'] });
}
