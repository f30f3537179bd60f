import type { ReadinessCheck } from '@platform/service-kit';
import type { UsageMetrics } from './metrics';
import type { UsageSender } from './sender';

/**
 * `usage_outbox` in /health/ready: reported, never required. A Stripe outage
 * grows the outbox but must not take payment out of rotation; the lag is in
 * `details` (and /metrics) for alerts.
 */
export function usageReadiness(
  metrics: UsageMetrics,
  sender: Pick<UsageSender, 'status'> | undefined,
): ReadinessCheck {
  return {
    name: 'usage_outbox',
    required: false,
    check: async () => {
      await metrics.stats();
      return true;
    },
    details: async () => {
      const stats = await metrics.stats();
      return {
        pending: stats.pending,
        failed: stats.failed,
        oldest_pending_age_seconds: Math.round(stats.oldestPendingAgeSeconds),
        held: stats.held,
        sender: sender?.status() ?? { running: false },
      };
    },
  };
}
