import { AppError } from '@platform/errors';
import type { AuthDeps } from '../auth/deps';
import { findOwnedApiKey, markApiKeyRevoked } from './repo';

/**
 * Revokes one of the user's keys; another user's key is 404 `api key not
 * found`, exactly like a missing one. The revocation marker goes to the shared
 * store before the row is updated, so no instance can serve the key from its
 * cache in between. Revoking a revoked key is a no-op that succeeds
 * (`changed: false`, nothing to audit).
 */
export async function revokeApiKey(
  deps: Pick<AuthDeps, 'prisma' | 'apiKeys' | 'clock'>,
  input: { userId: string; keyId: string },
): Promise<{ changed: boolean }> {
  const key = await findOwnedApiKey(deps.prisma, input.userId, input.keyId);
  if (!key) throw new AppError('api_key_not_found');
  if (key.revokedAt) return { changed: false };
  await deps.apiKeys.announceRevocation(key.hash);
  await markApiKeyRevoked(deps.prisma, key.id, new Date(deps.clock()));
  return { changed: true };
}
