import { randomUUID } from 'node:crypto';
import { createHttpMetrics, createLogger, createMemoryDestination } from '@platform/logging';
import request from 'supertest';
import type { PrismaClient } from '../../src/generated/prisma/client';
import type { MeterConfig } from '../../src/usage/meters';
import { createUsageMetrics } from '../../src/usage/metrics';
import type { RecordUsageDeps } from '../../src/usage/record-usage';
import { startUsageSender, type UsageSender } from '../../src/usage/sender';
import type { Target } from './endpoints';
import { API_KEY, type Harness } from './harness';

/** Env of an app and senders that bill usage, with retries fast enough for a test. */
export const USAGE_ENV = {
  PAYMENT_USAGE_METERS: 'tokens=ai_tokens,cost=ai_cost',
  PAYMENT_USAGE_DEFAULT_METER: 'tokens',
  PAYMENT_USAGE_SENDER_IDLE_MS: '50',
  PAYMENT_USAGE_RETRY_BASE_MS: '40',
  PAYMENT_USAGE_RETRY_MAX_MS: '400',
  PAYMENT_USAGE_SENDER_RATE_PER_SECOND: '1000',
  PAYMENT_USAGE_SENDER_BATCH: '25',
} as const;

export type UsageEventInput = {
  id?: string;
  user_id: string;
  meter?: string;
  value: number;
  timestamp?: string;
};

export function usageEvent(input: UsageEventInput) {
  return { id: randomUUID(), timestamp: new Date().toISOString(), ...input };
}

export function postUsage(target: Target, events: unknown[]) {
  return request(target).post('/api/v1/usage-events').set('X-API-Key', API_KEY).send({ events });
}

/** A sender on the harness's database and fake, as every payment process runs one. */
export function startTestSender(h: Harness, env: Record<string, string> = {}): UsageSender {
  const deps = h.deps({ ...USAGE_ENV, ...env });
  return startUsageSender({
    ...deps,
    metrics: createUsageMetrics(
      createHttpMetrics({ service: 'payment', defaultMetrics: false }).registry,
      deps.prisma,
    ),
  });
}

/** What `recordUsageEvents` needs, for a test that stores events without an app. */
export function recordDeps(prisma: PrismaClient, meters: MeterConfig | undefined): RecordUsageDeps {
  return {
    prisma,
    now: () => new Date(),
    meters,
    logger: createLogger({ service: 'payment', destination: createMemoryDestination() }),
    env: { PAYMENT_USAGE_MAX_CLOCK_SKEW_SECONDS: 600 },
    metrics: { refused: () => undefined },
  };
}

/** Waits until `check` holds, polling; fails after `timeoutMs`. */
export async function eventually(check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
