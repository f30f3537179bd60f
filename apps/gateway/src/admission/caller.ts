import type { ApiKeyRules } from '@platform/contract';
import type { Response } from 'express';
import { requireAuthOf } from '../auth/api-key-auth';

/** Who is calling, from the auth context. */
export type Caller = {
  userId: string;
  apiKeyId: string | null;
  /** The key's rules (docs/teams.md#key-rules), enforced by admission and the reservation. */
  keyRules?: ApiKeyRules | undefined;
};

/** The caller the key check let in (res.locals.auth): the one thing the AI code knows of authentication. */
export function callerOf(res: Response): Caller {
  const auth = requireAuthOf(res);
  if (auth.kind !== 'api_key') return { userId: auth.userId, apiKeyId: null };
  return { userId: auth.userId, apiKeyId: auth.apiKeyId, keyRules: auth.rules };
}

/** Only the caller's user id (no Caller object built): for a lookup started before admission. */
export function callerIdOf(res: Response): string {
  return requireAuthOf(res).userId;
}
