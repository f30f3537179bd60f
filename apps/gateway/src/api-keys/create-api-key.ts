import {
  type ApiKeyRules,
  type ApiKeyScope,
  type CreateApiKeyResponse,
  MAX_API_KEYS_PER_USER,
} from '@platform/contract';
import { AppError } from '@platform/errors';
import { generateApiKey, hashApiKey } from '../auth/api-key-hash';
import type { AuthDeps } from '../auth/deps';
import type { GatewayEnv } from '../env';
import { futureExpiry } from '../key-rules/expiry';
import { insertApiKeyWithinLimit } from './repo';

/**
 * Creates a key for the user; 400 `maximum_keys` when they already have 5
 * active ones. Its rules and expiry (optional, docs/teams.md#key-rules) are
 * stored with it; an expiry not in the future is 400 `validation failed`.
 */
export async function createApiKey(
  deps: Pick<AuthDeps, 'prisma'> &
    Partial<Pick<AuthDeps, 'clock'>> & { env: Pick<GatewayEnv, 'GATEWAY_SECRET'> },
  input: { userId: string; name: string; scope: ApiKeyScope; rules?: ApiKeyRules; expires_at?: string },
): Promise<CreateApiKeyResponse> {
  const expiresAt = futureExpiry(input.expires_at, (deps.clock ?? Date.now)());
  const { key, prefix } = generateApiKey();
  const row = await insertApiKeyWithinLimit(
    deps.prisma,
    {
      userId: input.userId,
      name: input.name,
      scope: input.scope,
      prefix,
      hash: hashApiKey(key, deps.env.GATEWAY_SECRET),
      rules: input.rules,
      expiresAt,
    },
    MAX_API_KEYS_PER_USER,
  );
  if (!row) throw new AppError('maximum_keys');
  return { key, key_id: row.id, key_prefix: row.prefix, name: row.name, scope: input.scope };
}
