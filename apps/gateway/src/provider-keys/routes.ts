import { PROVIDERS, ZProviderKeyParams, ZStoreProviderKeyRequest } from '@platform/contract';
import { AppError } from '@platform/errors';
import { jsonBody, parseRequestPart } from '@platform/service-kit';
import { type RequestHandler, Router } from 'express';
import { requireAuthOf } from '../auth/api-key-auth';
import type { ProviderKeyDeps } from './deps';
import { listProviderKeys } from './list-provider-keys';
import { removeProviderKey } from './remove-provider-key';
import { storeProviderKey } from './store-provider-key';

const KNOWN_PROVIDERS: ReadonlySet<string> = new Set(PROVIDERS);

/**
 * `/api/v1/keys`. `auth` accepts a session or an API key; `csrf` checks the
 * Origin of session-authenticated writes. The key itself is never echoed.
 */
export function createProviderKeyRouter(
  deps: ProviderKeyDeps,
  opts: { auth: RequestHandler; csrf: RequestHandler },
): Router {
  const router = Router();

  router.post('/', opts.auth, opts.csrf, jsonBody('16kb'), async (req, res) => {
    const body = parseRequestPart(ZStoreProviderKeyRequest, req.body);
    const stored = await storeProviderKey(deps, { userId: requireAuthOf(res).userId, ...body });
    res.status(201).json(stored);
  });

  router.get('/', opts.auth, async (_req, res) => {
    res.json(await listProviderKeys(deps, requireAuthOf(res).userId));
  });

  router.delete('/:provider', opts.auth, opts.csrf, async (req, res) => {
    const { provider } = parseRequestPart(ZProviderKeyParams, req.params);
    if (!KNOWN_PROVIDERS.has(provider)) throw new AppError('unknown_provider');
    await removeProviderKey(deps, { userId: requireAuthOf(res).userId, provider });
    res.status(204).end();
  });

  return router;
}
