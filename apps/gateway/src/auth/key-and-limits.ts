import { AppError } from '@platform/errors';
import type { RequestHandler } from 'express';
import { presentedApiKey, verifyApiKey } from './api-key-auth';
import type { ApiKeyVerifier } from './api-key-verifier';
import type { KeyGuessingGuard } from './key-guessing';
import type { ApiKeyAuthContext } from './types';

/** Limits of a caller with a valid key (the AI rate and token budget); its error, a 429, is the answer. */
export type LimitCheck = (auth: ApiKeyAuthContext) => Promise<void>;

function settle(promise: Promise<void>): Promise<PromiseSettledResult<void>> {
  return promise.then(
    () => ({ status: 'fulfilled', value: undefined }),
    (reason: unknown) => ({ status: 'rejected', reason }),
  );
}

/**
 * requireApiKey and the caller's limits in one store round trip: for a key
 * this instance has cached, `limits` starts in the same tick as the key's
 * revocation read, so their store commands go out together (auto-pipelined,
 * docs/performance.md); for any other key it starts once the key is known
 * valid. The key decides first: an unknown or revoked key is 401 whatever the
 * limits said (its rate counter may have counted one hit), a store failure
 * 503; then a refused limit is the answer (429 with Retry-After).
 */
export function requireApiKeyAndLimits(
  deps: { apiKeys: Pick<ApiKeyVerifier, 'begin' | 'verify'>; keyGuessing: KeyGuessingGuard },
  opts: { bearer?: boolean; limits: LimitCheck },
): RequestHandler {
  return async (req, res, next) => {
    const key = presentedApiKey(req, opts);
    if (!key) throw new AppError('missing_api_key');
    let limited: Promise<PromiseSettledResult<void>> | undefined;
    const auth = await verifyApiKey(deps, req, key, async (plaintext) => {
      const { cached, result } = deps.apiKeys.begin(plaintext);
      if (cached) limited = settle(opts.limits(cached));
      const found = await result.catch(async (err: unknown) => {
        await limited;
        throw err;
      });
      if (found) limited ??= settle(opts.limits(found));
      else await limited;
      return found;
    });
    const outcome = await limited;
    if (outcome?.status === 'rejected') throw outcome.reason;
    res.locals.auth = auth;
    next();
  };
}
