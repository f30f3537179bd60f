import type { StoredProviderKey } from '@platform/contract';
import type { ProviderKeyDeps } from './deps';
import { findProviderKeys } from './repo';

/** A stored key as the API shows it: provider, when, last four characters. */
export function toStoredProviderKey(row: {
  provider: string;
  createdAt: Date;
  last4: string;
}): StoredProviderKey {
  return {
    provider: row.provider as StoredProviderKey['provider'],
    created_at: row.createdAt.toISOString(),
    last4: row.last4,
  };
}

export async function listProviderKeys(
  deps: Pick<ProviderKeyDeps, 'sql'>,
  userId: string,
): Promise<StoredProviderKey[]> {
  return (await findProviderKeys(deps.sql, userId)).map(toStoredProviderKey);
}
