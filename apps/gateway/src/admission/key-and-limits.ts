import { AppError } from '@platform/errors';
import type { Clock } from '@platform/service-kit';
import type { Request, RequestHandler } from 'express';
import { MAX_KEY_LENGTH, presentedApiKey, verifyApiKey } from '../auth/api-key-auth';
import type { ApiKeyVerifier } from '../auth/api-key-verifier';
import type { KeyGuessingGuard } from '../auth/key-guessing';
import type { ApiKeyAuthContext } from '../auth/types';
import { lruCache } from '../cache/lru';
import { assertKeyLive } from '../key-rules/rules';
import { type RateCounter, setPendingAdmission } from './pending';
import { rateRefusal } from './rate-refusal';

/** Limits of a caller with a valid key (the AI rate and token budget); its error, a 429, is the answer. */
export type LimitCheck = (auth: ApiKeyAuthContext) => Promise<void>;

function settle(promise: Promise<void>): Promise<PromiseSettledResult<void>> {
  return promise.then(
    () => ({ status: 'fulfilled', value: undefined }),
    (reason: unknown) => ({ status: 'rejected', reason }),
  );
}

export type KeyAndLimitsDeps = {
  apiKeys: Pick<ApiKeyVerifier, 'begin' | 'verify' | 'peek' | 'confirm' | 'forget'>;
  keyGuessing: KeyGuessingGuard;
  clock: Clock;
};

export type KeyAndLimitsOptions = {
  bearer?: boolean;
  limits: LimitCheck;
  /**
   * For routes whose handler reserves budgets (runAccounted): the counter
   * `limits` counts on. A key this instance has cached is then let through
   * with no store read, and its revocation read and rate hit ride in the
   * reservation's script (pending.ts): one round trip fewer.
   */
  deferredRate?: (auth: ApiKeyAuthContext) => RateCounter;
};

/**
 * requireApiKey and the caller's limits in one store round trip: for a key
 * this instance has cached, `limits` starts in the same tick as the key's
 * revocation read, so their store commands go out together (one write per
 * turn, @platform/db redis-write-batching.ts); for any other key it starts
 * once the key is known valid. The key decides first: an unknown or revoked key is 401 whatever the
 * limits said (its rate counter may have counted one hit), a store failure
 * 503; then a refused limit is the answer (429 with Retry-After).
 *
 * With `deferredRate`, a cached key costs no round trip here: the request
 * carries a pending admission that its budget reservation checks, or that
 * the router's `admissionBeforeError` checks if the request fails first. A
 * key refused by its rate that way is checked here again, before its body is
 * read, until its window resets, so a refused caller cannot make us read
 * 10 MB bodies; a revoked one is dropped from the cache.
 */
export function requireApiKeyAndLimits(deps: KeyAndLimitsDeps, opts: KeyAndLimitsOptions): RequestHandler {
  const checkNow = async (req: Request, key: string): Promise<ApiKeyAuthContext> => {
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
    return auth;
  };
  // Keys refused by their rate in a reservation, until their window resets (ms on `clock`).
  const rateRefused = lruCache<string, number>({ max: 10_000 });
  const deferredRate = opts.deferredRate;

  return async (req, res, next) => {
    const key = presentedApiKey(req, opts);
    if (!key) throw new AppError('missing_api_key');
    const peeked = deferredRate && key.length <= MAX_KEY_LENGTH ? deps.apiKeys.peek(key) : null;
    const until = peeked ? rateRefused.get(peeked.identity.apiKeyId) : undefined;
    if (deferredRate && peeked && (until === undefined || until <= deps.clock())) {
      const { identity } = peeked;
      assertKeyLive(identity, deps.clock());
      res.locals.auth = identity;
      setPendingAdmission(res, {
        gate: {
          markerKey: peeked.markerKey,
          rate: deferredRate(identity),
        },
        passed: () => deps.apiKeys.confirm(identity),
        async refused(verdict) {
          if (verdict.refused === 'rate') {
            rateRefused.set(identity.apiKeyId, deps.clock() + verdict.resetMs);
            throw rateRefusal(deferredRate(identity), verdict.resetMs);
          }
          deps.apiKeys.forget(peeked.hash);
          await checkNow(req, key);
        },
        runAlone: async () => {
          await checkNow(req, key);
        },
      });
      next();
      return;
    }
    res.locals.auth = await checkNow(req, key);
    next();
  };
}
