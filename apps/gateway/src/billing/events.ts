import { MAX_USAGE_EVENT_VALUE, MEDIA_KINDS, type UsageEvent } from '@platform/contract';
import type { BillingQuantity, LaneBilling } from './lane-billing';

/** The shipper's rules: what becomes a usage event, on which meter, of which value. */
export type BillingRules = {
  quantity: BillingQuantity;
  meter: string | undefined;
  /** Bill records paid with the caller's own provider key (default false: the caller paid the provider). */
  billByok: boolean;
  /** `project=meter` overrides; they win over the lane's meter. */
  projectMeters: ReadonlyMap<string, string>;
  /** `[model prefix, meter]`, longest prefix first: a model family's tokens on its own meter (over the lane's). */
  modelMeters?: ReadonlyArray<readonly [string, string]>;
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
  /** The model that answered; absent where the reader does not select it. */
  model?: string | null;
  total_tokens: number;
  cost_micros: number;
  byok: boolean;
  created_at: string;
};

/** The meter of a model's family (BILLING_MODEL_METERS): the longest configured prefix of its name. */
export function modelMeterOf(rules: BillingRules, model: string | null | undefined): string | undefined {
  if (!model) return undefined;
  return rules.modelMeters?.find(([prefix]) => model.startsWith(prefix))?.[1];
}

/** Why a record produced no event; `null` when it did. */
export type SkipReason = 'byok' | 'free_lane' | 'zero' | 'too_large';

const MEDIA_ENDPOINTS: ReadonlySet<string> = new Set(MEDIA_KINDS);

/**
 * The lane billing a record falls under: a media record's is `media_billing`,
 * whatever lane the request named (a media call naming `free` is not free).
 */
export function laneBillingOf(
  rules: BillingRules,
  row: Pick<BillableRow, 'lane' | 'endpoint'>,
): LaneBilling | undefined {
  if (row.lane === null || MEDIA_ENDPOINTS.has(row.endpoint)) return rules.media;
  return rules.lanes[row.lane];
}

/**
 * What a record is billed by: its lane's quantity, else BILLING_QUANTITY;
 * a media record (no tokens) by its cost unless `media_billing.quantity` says otherwise.
 */
export function quantityOf(
  rules: BillingRules,
  row: Pick<BillableRow, 'lane' | 'endpoint'>,
): BillingQuantity {
  const lane = laneBillingOf(rules, row);
  if (lane?.quantity) return lane.quantity;
  return MEDIA_ENDPOINTS.has(row.endpoint) ? 'cost_micros' : rules.quantity;
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
  const lane = laneBillingOf(rules, row);
  if (lane?.mode === 'free') return { skip: 'free_lane' };
  const quantity = quantityOf(rules, row);
  const value = quantity === 'cost_micros' ? row.cost_micros : row.total_tokens;
  if (value <= 0) return { skip: 'zero' };
  if (value > MAX_USAGE_EVENT_VALUE) return { skip: 'too_large' };
  // A media record's own meter wins: project and model meters count tokens
  // (a model prefix such as `gpt-4o` also matches `gpt-4o-mini-tts`).
  const media = MEDIA_ENDPOINTS.has(row.endpoint);
  const meter =
    media && lane?.meter
      ? lane.meter
      : (rules.projectMeters.get(row.project_id) ??
        (media ? undefined : modelMeterOf(rules, row.model)) ??
        lane?.meter ??
        rules.meter);
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
