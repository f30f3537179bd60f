import { PROVIDERS, ZProviderKeyParams, ZStoreProviderKeyRequest } from '@platform/contract';
import { AppError } from '@platform/errors';
import { jsonBody, parseRequestPart } from '@platform/service-kit';
import { type RequestHandler, Router } from 'express';
import { requireAuthOf } from '../auth/api-key-auth';
import type { ProviderKeyService } from './service';

const KNOWN_PROVIDERS: ReadonlySet<string> = new Set(PROVIDERS);

/**
 * `/api/v1/keys`. `auth` accepts a session or an API key; `csrf` checks the
 * Origin of session-authenticated writes. The key itself is never echoed.
 */
export function createProviderKeyRouter(opts: {
  service: ProviderKeyService;
  auth: RequestHandler;
  csrf: RequestHandler;
}): Router {
  const router = Router();
  const { service } = opts;

  router.post('/', opts.auth, opts.csrf, jsonBody('16kb'), async (req, res) => {
    const body = parseRequestPart(ZStoreProviderKeyRequest, req.body);
    const stored = await service.store(requireAuthOf(res).userId, body.provider, body.key);
    res.status(201).json(stored);
  });

  router.get('/', opts.auth, async (_req, res) => {
    res.json(await service.list(requireAuthOf(res).userId));
  });

  router.delete('/:provider', opts.auth, opts.csrf, async (req, res) => {
    const { provider } = parseRequestPart(ZProviderKeyParams, req.params);
    if (!KNOWN_PROVIDERS.has(provider)) throw new AppError('unknown_provider');
    await service.remove(requireAuthOf(res).userId, provider);
    res.status(204).end();
  });

  return router;
}
