import type { ApiKeyRules, ApiKeyScope, CreateApiKeyResponse } from '@platform/contract';
import { AppError } from '@platform/errors';
import { insertApiKeyWithinLimit } from '../api-keys/repo';
import { generateApiKey, hashApiKey } from '../auth/api-key-hash';
import type { AuthDeps } from '../auth/deps';
import { futureExpiry } from '../key-rules/expiry';

/**
 * A key owned by a team: by its billing subject, so its usage, budgets and
 * billing are the team's. At most TEAM_MAX_API_KEYS active ones (400
 * `maximum_team_keys`); the rest as a user's key (hash only, shown once).
 */
export async function createTeamKey(
  deps: Pick<AuthDeps, 'prisma' | 'clock' | 'env'>,
  subjectUserId: string,
  input: {
    name: string;
    scope: ApiKeyScope;
    rules?: ApiKeyRules | undefined;
    expires_at?: string | undefined;
  },
): Promise<CreateApiKeyResponse> {
  const expiresAt = futureExpiry(input.expires_at, deps.clock());
  const { key, prefix } = generateApiKey();
  const row = await insertApiKeyWithinLimit(
    deps.prisma,
    {
      userId: subjectUserId,
      name: input.name,
      scope: input.scope,
      prefix,
      hash: hashApiKey(key, deps.env.GATEWAY_SECRET),
      rules: input.rules,
      expiresAt,
    },
    deps.env.TEAM_MAX_API_KEYS,
  );
  if (!row) throw new AppError('maximum_team_keys');
  return { key, key_id: row.id, key_prefix: row.prefix, name: row.name, scope: input.scope };
}
