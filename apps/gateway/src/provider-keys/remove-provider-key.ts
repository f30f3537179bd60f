import { AppError } from '@platform/errors';
import type { ProviderKeyDeps } from './deps';
import { deleteProviderKey } from './repo';

/** Deletes the user's key for one provider; 404 `provider key not found` when there is none. */
export async function removeProviderKey(
  deps: Pick<ProviderKeyDeps, 'prisma' | 'storedKeys'>,
  input: { userId: string; provider: string },
): Promise<void> {
  const deleted = await deleteProviderKey(deps.prisma, input.userId, input.provider);
  await deps.storedKeys.invalidate(input.userId);
  if (!deleted) throw new AppError('provider_key_not_found');
}
