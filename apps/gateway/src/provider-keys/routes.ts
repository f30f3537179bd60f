import { ZProviderKeyParams, ZStoreProviderKeyRequest } from '@platform/contract';
import { AppError } from '@platform/errors';
import { jsonBody, parseRequestPart } from '@platform/service-kit';
import { type RequestHandler, Router } from 'express';
import type { ProviderCatalog } from '../ai/providers/catalog';
import { requireAuthOf } from '../auth/api-key-auth';
import type { ProviderKeyDeps } from './deps';
import { listProviderKeys } from './list-provider-keys';
import { removeProviderKey } from './remove-provider-key';
import { storeProviderKey } from './store-provider-key';

/**
 * `/api/v1/keys`. `auth` accepts a session or an API key; `csrf` checks the
 * Origin of session-authenticated writes. The key itself is never echoed.
 * `catalog` names the providers a key may be stored for: the built-in ones
 * and those the lanes config adds.
 */
export function createProviderKeyRouter(
  deps: ProviderKeyDeps,
  opts: { auth: RequestHandler; csrf: RequestHandler; catalog: ProviderCatalog },
): Router {
  const router = Router();
  const known = (provider: string) => opts.catalog.get(provider) !== undefined;

  router.post('/api/v1/keys', opts.auth, opts.csrf, jsonBody('16kb'), async (req, res) => {
    const body = parseRequestPart(ZStoreProviderKeyRequest, req.body);
    if (!known(body.provider))
      throw new AppError('validation_failed', {
        details: [{ path: 'provider', message: 'unknown provider' }],
      });
    const stored = await storeProviderKey(deps, { userId: requireAuthOf(res).userId, ...body });
    res.status(201).json(stored);
  });

  router.get('/api/v1/keys', opts.auth, async (_req, res) => {
    res.json(await listProviderKeys(deps, requireAuthOf(res).userId));
  });

  router.delete('/api/v1/keys/:provider', opts.auth, opts.csrf, async (req, res) => {
    const { provider } = parseRequestPart(ZProviderKeyParams, req.params);
    if (!known(provider)) throw new AppError('unknown_provider');
    await removeProviderKey(deps, { userId: requireAuthOf(res).userId, provider });
    res.status(204).end();
  });

  return router;
}
