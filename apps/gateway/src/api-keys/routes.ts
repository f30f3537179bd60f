import {
  type ListApiKeysResponse,
  type RevokeApiKeyResponse,
  type UpdateApiKeyRulesResponse,
  ZCreateApiKeyRequest,
  ZRevokeApiKeyRequest,
  ZUpdateApiKeyRulesRequest,
} from '@platform/contract';
import { jsonBody, parseRequestPart } from '@platform/service-kit';
import { Router } from 'express';
import { recordAudit } from '../audit/record';
import { authenticate, requireAuthOf } from '../auth/api-key-auth';
import { requireTrustedOrigin } from '../auth/csrf';
import type { AuthDeps } from '../auth/deps';
import { createApiKey } from './create-api-key';
import { listApiKeys } from './list-api-keys';
import { revokeApiKey } from './revoke-api-key';
import { updateApiKeyRules } from './update-rules';

/** API key management for signed-in users, mounted under /api/v1. */
export function createApiKeyRouter(deps: AuthDeps): Router {
  const router = Router();
  const session = authenticate(deps, { allow: ['session'] });
  const csrf = requireTrustedOrigin(deps);
  const json = jsonBody('4kb');

  router.post('/api/v1/auth/api-keys', session, csrf, json, async (req, res) => {
    const body = parseRequestPart(ZCreateApiKeyRequest, req.body);
    const userId = requireAuthOf(res).userId;
    const created = await createApiKey(deps, { userId, ...body });
    await recordAudit(deps, req, res, {
      action: 'api_key.create',
      ownerUserId: userId,
      target: `api_key:${created.key_id}`,
      after: {
        name: created.name,
        scope: created.scope,
        key_prefix: created.key_prefix,
        rules: body.rules ?? null,
        expires_at: body.expires_at ?? null,
      },
    });
    res.status(201).json(created);
  });

  router.get('/api/v1/auth/api-keys/list', session, async (_req, res) => {
    res.json({ keys: await listApiKeys(deps, requireAuthOf(res).userId) } satisfies ListApiKeysResponse);
  });

  router.post('/api/v1/auth/api-keys/revoke', session, csrf, json, async (req, res) => {
    const body = parseRequestPart(ZRevokeApiKeyRequest, req.body);
    const userId = requireAuthOf(res).userId;
    const { changed } = await revokeApiKey(deps, { userId, keyId: body.key_id });
    if (changed) {
      await recordAudit(deps, req, res, {
        action: 'api_key.revoke',
        ownerUserId: userId,
        target: `api_key:${body.key_id}`,
        before: { status: 'active' },
        after: { status: 'revoked' },
      });
    }
    res.json({ key_id: body.key_id, status: 'revoked' } satisfies RevokeApiKeyResponse);
  });

  // A key's rules and expiry (docs/teams.md#key-rules): replaced whole; null clears.
  router.post('/api/v1/auth/api-keys/rules', session, csrf, json, async (req, res) => {
    const body = parseRequestPart(ZUpdateApiKeyRulesRequest, req.body);
    const userId = requireAuthOf(res).userId;
    const change = await updateApiKeyRules(deps, { userId, keyId: body.key_id, ...body });
    await recordAudit(deps, req, res, {
      action: 'api_key.rules',
      ownerUserId: userId,
      target: `api_key:${body.key_id}`,
      ...change,
    });
    res.json({ key_id: body.key_id, ...change.after } satisfies UpdateApiKeyRulesResponse);
  });

  return router;
}
