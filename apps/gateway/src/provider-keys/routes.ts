import { ZProviderKeyParams, ZStoreProviderKeyRequest } from '@platform/contract';
import { AppError } from '@platform/errors';
import { jsonBody, parseRequestPart } from '@platform/service-kit';
import { type RequestHandler, Router } from 'express';
import type { ProviderCatalog } from '../ai/providers/catalog';
import { type AuditDeps, recordAudit } from '../audit/record';
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
  deps: ProviderKeyDeps & Pick<AuditDeps, 'logger'>,
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
    const userId = requireAuthOf(res).userId;
    const stored = await storeProviderKey(deps, { userId, ...body });
    // The stored answer names the provider and the key's last four characters, never the key.
    await recordAudit(deps, req, res, {
      action: 'provider_key.set',
      ownerUserId: userId,
      target: `provider_key:${body.provider}`,
      after: stored,
    });
    res.status(201).json(stored);
  });

  router.get('/api/v1/keys', opts.auth, async (_req, res) => {
    res.json(await listProviderKeys(deps, requireAuthOf(res).userId));
  });

  router.delete('/api/v1/keys/:provider', opts.auth, opts.csrf, async (req, res) => {
    const { provider } = parseRequestPart(ZProviderKeyParams, req.params);
    if (!known(provider)) throw new AppError('unknown_provider');
    const userId = requireAuthOf(res).userId;
    await removeProviderKey(deps, { userId, provider });
    await recordAudit(deps, req, res, {
      action: 'provider_key.delete',
      ownerUserId: userId,
      target: `provider_key:${provider}`,
    });
    res.status(204).end();
  });

  return router;
}
