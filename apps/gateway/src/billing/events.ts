import { MAX_USAGE_EVENT_VALUE, type UsageEvent } from '@platform/contract';
import type { BillingQuantity, LaneBilling } from './lane-billing';

/** The shipper's rules: what becomes a usage event, on which meter, of which value. */
export type BillingRules = {
  quantity: BillingQuantity;
  meter: string | undefined;
  /** Bill records paid with the caller's own provider key (default false: the caller paid the provider). */
  billByok: boolean;
  /** `project=meter` overrides; they win over the lane's meter. */
  projectMeters: ReadonlyMap<string, string>;
  lanes: Readonly<Record<string, LaneBilling>>;
  media: LaneBilling | undefined;
};

/** The subset of a usage feed row the rules read. */
export type BillableRow = {
  id: string;
  user_id: string;
  project_id: string;
  endpoint: string;
  lane: string | null;
  total_tokens: number;
  cost_micros: number;
  byok: boolean;
  created_at: string;
};

/** Why a record produced no event; `null` when it did. */
export type SkipReason = 'byok' | 'free_lane' | 'zero' | 'too_large';

/** The lane billing a record falls under (media records have no lane). */
export function laneBillingOf(rules: BillingRules, lane: string | null): LaneBilling | undefined {
  return lane === null ? rules.media : rules.lanes[lane];
}

/**
 * The usage event of one ledger record, or why it has none. Pure and
 * deterministic: the shipper and the reconciliation export use it both, so
 * the expected totals are computed exactly as the events were.
 */
export function usageEventOf(
  rules: BillingRules,
  row: BillableRow,
): { event: UsageEvent; skip?: undefined } | { event?: undefined; skip: SkipReason } {
  if (row.byok && !rules.billByok) return { skip: 'byok' };
  const lane = laneBillingOf(rules, row.lane);
  if (lane?.mode === 'free') return { skip: 'free_lane' };
  const quantity = lane?.quantity ?? rules.quantity;
  const value = quantity === 'cost_micros' ? row.cost_micros : row.total_tokens;
  if (value <= 0) return { skip: 'zero' };
  if (value > MAX_USAGE_EVENT_VALUE) return { skip: 'too_large' };
  const meter = rules.projectMeters.get(row.project_id) ?? lane?.meter ?? rules.meter;
  return {
    event: {
      id: row.id,
      user_id: row.user_id,
      ...(meter === undefined ? {} : { meter }),
      value,
      timestamp: row.created_at,
    },
  };
}
