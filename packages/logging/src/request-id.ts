import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import { requestContext } from './context';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

/**
 * First middleware: adopts a valid incoming `x-request-id` UUID or makes one,
 * echoes it, and runs the rest of the request inside its log context.
 */
export function requestId(): RequestHandler {
  return (req, res, next) => {
    const incoming = req.headers['x-request-id'];
    const id = typeof incoming === 'string' && UUID.test(incoming) ? incoming.toLowerCase() : randomUUID();
    res.locals.requestId = id;
    res.setHeader('x-request-id', id);
    requestContext.run({ requestId: id }, next);
  };
}
