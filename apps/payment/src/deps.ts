import type { KeyValueStore } from '@platform/db';
import type { HttpMetrics, Logger } from '@platform/logging';
import type Stripe from 'stripe';
import type { PaymentEnv } from './env';
import type { PrismaClient } from './generated/prisma/client';
import type { UsageMetrics } from './usage/metrics';
import type { UsageSender } from './usage/sender';

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
  /** The /metrics registry, when main.ts shares it with the usage sender; createApp makes one otherwise. */
  metrics?: HttpMetrics;
  /** Usage outbox metrics on that registry (created by createApp when absent). */
  usageMetrics?: UsageMetrics;
  /** This process's usage sender, shown in readiness details; absent when it does not run here. */
  usageSender?: Pick<UsageSender, 'status'>;
};
