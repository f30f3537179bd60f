import {
  type ApiKeyScope,
  type ApiKeySummary,
  type CreateApiKeyResponse,
  MAX_API_KEYS_PER_USER,
} from '@platform/contract';
import { AppError } from '@platform/errors';
import type { AuthDeps } from '../auth/deps';
import { generateApiKey, hashApiKey } from './hash';
import { findOwnedApiKey, insertApiKeyWithinLimit, listApiKeysOf, markApiKeyRevoked } from './repo';

/** Creates a key for the user; 400 `maximum_keys` when they already have 5 active ones. */
export async function createApiKey(
  deps: AuthDeps,
  input: { userId: string; name: string; scope: ApiKeyScope },
): Promise<CreateApiKeyResponse> {
  const { key, prefix } = generateApiKey();
  const row = await insertApiKeyWithinLimit(
    deps.prisma,
    {
      userId: input.userId,
      name: input.name,
      scope: input.scope,
      prefix,
      hash: hashApiKey(key, deps.env.GATEWAY_SECRET),
    },
    MAX_API_KEYS_PER_USER,
  );
  if (!row) throw new AppError('maximum_keys');
  return { key, key_id: row.id, key_prefix: row.prefix, name: row.name, scope: input.scope };
}

export async function listApiKeys(deps: AuthDeps, userId: string): Promise<ApiKeySummary[]> {
  const rows = await listApiKeysOf(deps.prisma, userId);
  return rows.map((r) => ({
    key_id: r.id,
    key_prefix: r.prefix,
    name: r.name,
    // Stored scopes come from the contract enum at creation.
    scope: r.scope as ApiKeyScope,
    created_at: r.createdAt.toISOString(),
    last_used_at: r.lastUsedAt ? r.lastUsedAt.toISOString() : null,
    status: r.revokedAt ? 'revoked' : 'active',
  }));
}

/**
 * Revokes one of the user's keys; another user's key is 404 `api key not
 * found`, exactly like a missing one. The revocation marker goes to the shared
 * store before the row is updated, so no instance can serve the key from its
 * cache in between. Revoking a revoked key is a no-op that succeeds.
 */
export async function revokeApiKey(deps: AuthDeps, input: { userId: string; keyId: string }): Promise<void> {
  const key = await findOwnedApiKey(deps.prisma, input.userId, input.keyId);
  if (!key) throw new AppError('api_key_not_found');
  if (key.revokedAt) return;
  await deps.apiKeys.announceRevocation(key.hash);
  await markApiKeyRevoked(deps.prisma, key.id, deps.clock());
}
