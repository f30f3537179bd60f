import type { Request, RequestHandler, Response } from 'express';
import type { ClientRateLimitInfo, Store } from 'express-rate-limit';
import { type Limit, rateLimited, type WindowCounter, windowKey } from './rate-limit';

/**
 * express-rate-limit's store interface over the key-value port's fixed-window
 * counter, so a limit run as middleware counts in the same Redis keys
 * (`rl:<limit>:<subject>`) as the limits that services check in code.
 */
class WindowCounterStore implements Store {
  /** Counters live in Redis (or the process-local memory store): never per instance. */
  readonly localKeys = false;
  readonly prefix: string;

  constructor(
    private readonly kv: WindowCounter,
    private readonly limit: Limit,
  ) {
    this.prefix = windowKey(limit, '');
  }

  async increment(key: string): Promise<ClientRateLimitInfo> {
    return this.add(key, 1);
  }

  async decrement(key: string): Promise<void> {
    await this.add(key, -1);
  }

  async resetKey(key: string): Promise<void> {
    const { totalHits } = await this.add(key, 0);
    if (totalHits > 0) await this.add(key, -totalHits);
  }

  private async add(key: string, by: number): Promise<ClientRateLimitInfo> {
    const { total, resetMs } = await this.kv.incrWindow(windowKey(this.limit, key), by, this.limit.windowMs);
    return { totalHits: total, resetTime: new Date(Date.now() + resetMs) };
  }
}

/**
 * A request window as Express middleware: express-rate-limit counts `keyOf`
 * in the key-value port and sets the draft-8 `RateLimit`/`RateLimit-Policy`
 * headers; over the limit, the request gets our 429 `rate_limited` with
 * Retry-After through the error handler. A store failure reaches the error
 * handler too (503 when the key-value store is down), never a silent pass.
 *
 * express-rate-limit (with ip-address, ~0.4 MB of heap) loads here, on the
 * first call: the payment service uses it, the gateway, which imports this
 * package too, never does (issue 46).
 */
export function createWindowLimit(options: {
  kv: WindowCounter;
  limit: Limit;
  keyOf: (req: Request, res: Response) => string;
}): RequestHandler {
  const { limit } = options;
  const { rateLimit } = require('express-rate-limit') as typeof import('express-rate-limit');
  return rateLimit({
    windowMs: limit.windowMs,
    limit: limit.max,
    identifier: limit.name,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    passOnStoreError: false,
    // The key is ours (an API key's fingerprint, not an address), so the IPv6 subnet check does not apply.
    validate: { keyGeneratorIpFallback: false, trustProxy: false, xForwardedForHeader: false },
    store: new WindowCounterStore(options.kv, limit),
    keyGenerator: (req, res) => options.keyOf(req, res),
    handler: (req, _res, next) => {
      const resetTime = (req as Request & { rateLimit?: { resetTime?: Date } }).rateLimit?.resetTime;
      next(rateLimited(resetTime ? resetTime.getTime() - Date.now() : limit.windowMs));
    },
  });
}
