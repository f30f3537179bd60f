import type { KeyValueStore } from '@platform/db';
import type { Logger } from '@platform/logging';
import type { Store as RateLimitStore } from 'express-rate-limit';
import type Stripe from 'stripe';
import type { PaymentEnv } from './env';
import type { PrismaClient } from './generated/prisma/client';

/** Everything the app needs from outside; main.ts builds it, tests build their own. */
export type PaymentDeps = {
  env: PaymentEnv;
  logger: Logger;
  prisma: PrismaClient;
  /** Shared expiring state: idempotency fingerprints. */
  kv: KeyValueStore;
  stripe: Stripe;
  /** Counter store of the per-key rate limit; absent -> in-process memory (single instance). */
  rateLimitStore?: RateLimitStore;
  /** Current time; tests replace it to age subscription snapshots. Default: the system clock. */
  now?: () => Date;
};
