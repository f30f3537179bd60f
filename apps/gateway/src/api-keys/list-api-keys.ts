import type { ApiKeyScope, ApiKeySummary } from '@platform/contract';
import type { AuthDeps } from '../auth/deps';
import { storedRulesOf } from '../key-rules/rules';
import { listApiKeysOf } from './repo';

/** The user's keys, active and revoked, without secrets; with their rules and expiry when set. */
export async function listApiKeys(deps: Pick<AuthDeps, 'prisma'>, userId: string): Promise<ApiKeySummary[]> {
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
    ...ruleFieldsOf(r),
  }));
}

function ruleFieldsOf(r: {
  rules: unknown;
  expiresAt: Date | null;
}): Pick<ApiKeySummary, 'rules' | 'expires_at'> {
  const rules = storedRulesOf(r.rules);
  return {
    ...(rules ? { rules } : {}),
    ...(r.expiresAt ? { expires_at: r.expiresAt.toISOString() } : {}),
  };
}
