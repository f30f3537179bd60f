import { AppError } from '@platform/errors';
import type { ApiKeyRules } from '../key-rules/rules';
import type { CounterClaim } from './counter-store';

const MINUTE_MS = 60_000;
/**
 * A concurrency counter's expiry, renewed by every reservation on it: the
 * slots of an instance that died mid-request come back at most this long
 * after the key's last request.
 */
export const CONCURRENCY_TTL_MS = 3_600_000;

/**
 * A rule counter's `windowStartsAt`: after every keeping marker, so the store
 * never reports it lost (there are no daily sums to rebuild it from); a
 * counter Redis lost starts again from 0 (at most a minute's tokens, or the
 * slots of requests in progress, pass twice).
 */
const NEVER_REBUILT = Number.MAX_SAFE_INTEGER;

/** How a claim's counter is settled: tokens used, or the slot given back. */
export type RuleClaimKind = 'tokens' | 'slot';

/** One counter a key rule adds to a reservation, and how it refuses. */
export type RuleClaim = {
  claim: CounterClaim;
  kind: RuleClaimKind;
  /** The 429 when the counter is spent. */
  refuse(at: number): AppError;
  /** The 400 when the request alone needs more than the rule's whole window. */
  tooLarge(least: number): AppError;
};

const detail = (path: string, message: string) => [{ path, message }];

/**
 * The counters of a key's tokens-per-minute and concurrent-requests rules,
 * reserved in the same atomic step as the budgets (budgets.ts), so they hold
 * across instances and under concurrency exactly as budgets do. A stream's
 * continuation (`continuation`) takes no second slot.
 */
export function keyRuleClaims(
  apiKeyId: string | null,
  rules: ApiKeyRules | undefined,
  needTokens: number,
  at: number,
  continuation = false,
): RuleClaim[] {
  if (!apiKeyId || !rules) return [];
  const out: RuleClaim[] = [];
  const tpm = rules.tokens_per_minute;
  if (tpm !== undefined) {
    const minute = Math.floor(at / MINUTE_MS);
    const path = 'key.tokens_per_minute';
    out.push({
      claim: {
        key: `keyrule:tpm:${apiKeyId}:${minute}`,
        limit: tpm,
        need: needTokens,
        ttlMs: 2 * MINUTE_MS,
        windowStartsAt: NEVER_REBUILT,
      },
      kind: 'tokens',
      refuse: (now) =>
        new AppError('rate_limited', {
          headers: { 'Retry-After': String(Math.max(1, Math.ceil(((minute + 1) * MINUTE_MS - now) / 1000))) },
          details: detail(path, `tokens per minute of API key ${apiKeyId} (${tpm}) are spent`),
        }),
      tooLarge: (least) =>
        new AppError('request_exceeds_budget', {
          details: detail(
            path,
            `tokens per minute of API key ${apiKeyId} (${tpm}) is smaller than this request (at least ${least} tokens)`,
          ),
        }),
    });
  }
  const slots = rules.concurrent_requests;
  if (slots !== undefined && !continuation) {
    const path = 'key.concurrent_requests';
    const refuse = () =>
      new AppError('rate_limited', {
        headers: { 'Retry-After': '1' },
        details: detail(path, `API key ${apiKeyId} already has ${slots} requests in progress`),
      });
    out.push({
      claim: {
        key: `keyrule:conc:${apiKeyId}`,
        limit: slots,
        need: 1,
        ttlMs: CONCURRENCY_TTL_MS,
        windowStartsAt: NEVER_REBUILT,
        renewTtl: true,
      },
      kind: 'slot',
      refuse,
      tooLarge: refuse,
    });
  }
  return out;
}
