import cors from 'cors';
import type { RequestHandler } from 'express';
import type { GatewayEnv } from '../env';
import { corsOrigins } from './origins';

// authorization and x-project-id: the OpenAI-compatible /v1 (Bearer key, project header).
const ALLOWED_HEADERS = [
  'content-type',
  'x-api-key',
  'x-request-id',
  'idempotency-key',
  'authorization',
  'x-project-id',
];
const EXPOSED_HEADERS = ['x-request-id', 'retry-after', 'ratelimit', 'ratelimit-policy', 'x-model-used'];

/**
 * CORS for browser clients on GATEWAY_CORS_ORIGINS: only those origins get
 * Access-Control-Allow-Origin and Allow-Credentials; every preflight is
 * answered (204, without allow headers for unlisted origins) and every
 * response varies on Origin so shared caches keep them apart.
 */
export function corsPolicy(deps: { env: Pick<GatewayEnv, 'GATEWAY_CORS_ORIGINS'> }): RequestHandler {
  const allowed = corsOrigins(deps.env);
  const listed = cors({
    origin: (origin, callback) => callback(null, origin !== undefined && allowed.has(origin)),
    credentials: true,
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowedHeaders: ALLOWED_HEADERS,
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: 600,
    optionsSuccessStatus: 204,
  });
  return (req, res, next) => {
    res.vary('Origin');
    const origin = req.headers.origin;
    if (typeof origin === 'string' && allowed.has(origin)) return listed(req, res, next);
    if (req.method === 'OPTIONS' && req.headers['access-control-request-method']) {
      res.status(204).end();
      return;
    }
    next();
  };
}
