import type { ApiKeyRules } from '@platform/contract';
import { AppError } from '@platform/errors';
import type { AuthDeps } from '../auth/deps';
import { futureExpiry } from '../key-rules/expiry';
import { storedRulesOf } from '../key-rules/rules';
import { replaceApiKeyRules } from './repo';

export type RulesChange = {
  before: { rules: ApiKeyRules | null; expires_at: string | null };
  after: { rules: ApiKeyRules | null; expires_at: string | null };
};

/**
 * Replaces the rules and expiry of one of the user's keys (404 `api key not
 * found` for another user's key, as revocation answers). Every instance
 * drops its cached copy of the key (pub/sub), so the change applies at once
 * where the message arrives and within the cache's 30 s everywhere.
 */
export async function updateApiKeyRules(
  deps: Pick<AuthDeps, 'prisma' | 'apiKeys' | 'clock'>,
  input: { userId: string; keyId: string; rules: ApiKeyRules | null; expires_at: string | null },
): Promise<RulesChange> {
  const expiresAt = futureExpiry(input.expires_at, deps.clock()) ?? null;
  const before = await replaceApiKeyRules(deps.prisma, input.userId, input.keyId, {
    rules: input.rules,
    expiresAt,
  });
  if (!before) throw new AppError('api_key_not_found');
  await deps.apiKeys.announceChange(before.hash);
  return {
    before: {
      rules: storedRulesOf(before.rules) ?? null,
      expires_at: before.expiresAt?.toISOString() ?? null,
    },
    after: { rules: input.rules, expires_at: expiresAt?.toISOString() ?? null },
  };
}
