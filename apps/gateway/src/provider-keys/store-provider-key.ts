import type { StoredProviderKey } from '@platform/contract';
import { AppError } from '@platform/errors';
import { sealKey } from './crypto';
import type { ProviderKeyDeps } from './deps';
import { toStoredProviderKey } from './list-provider-keys';
import { upsertProviderKey } from './repo';

/** Encrypts and stores (or replaces) the user's key for one provider; 503 without master keys. */
export async function storeProviderKey(
  deps: ProviderKeyDeps,
  input: { userId: string; provider: string; key: string },
): Promise<StoredProviderKey> {
  const { userId, provider, key } = input;
  if (!deps.masterKeys)
    throw new AppError('service_unavailable', { message: 'key storage is not configured' });
  const sealed = sealKey(deps.masterKeys, key, { userId, provider });
  const { createdAt } = await upsertProviderKey(deps.prisma, {
    userId,
    provider,
    last4: key.slice(-4),
    sealed,
    at: new Date(deps.clock()),
  });
  await deps.storedKeys.invalidate(userId);
  return toStoredProviderKey({ provider, createdAt, last4: key.slice(-4) });
}
