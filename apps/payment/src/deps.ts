import type { KeyValueStore } from '@platform/db';
import type { Logger } from '@platform/logging';
import type Stripe from 'stripe';
import type { PaymentEnv } from './env';
import type { PrismaClient } from './generated/prisma/client';

/** Everything the app needs from outside; main.ts builds it, tests build their own. */
export type PaymentDeps = {
  env: PaymentEnv;
  logger: Logger;
  prisma: PrismaClient;
  /** Shared expiring state: rate-limit counters and idempotency fingerprints (Redis or in-process). */
  kv: KeyValueStore;
  stripe: Stripe;
  /** Current time; main.ts passes the system clock, tests one they move to age subscription snapshots. */
  now: () => Date;
};
