import { type ApiKeyScope, type CreateApiKeyResponse, MAX_API_KEYS_PER_USER } from '@platform/contract';
import { AppError } from '@platform/errors';
import { generateApiKey, hashApiKey } from '../auth/api-key-hash';
import type { AuthDeps } from '../auth/deps';
import type { GatewayEnv } from '../env';
import { insertApiKeyWithinLimit } from './repo';

/** Creates a key for the user; 400 `maximum_keys` when they already have 5 active ones. */
export async function createApiKey(
  deps: Pick<AuthDeps, 'prisma'> & { env: Pick<GatewayEnv, 'GATEWAY_SECRET'> },
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
