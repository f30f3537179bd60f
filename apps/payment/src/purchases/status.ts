import type { PurchaseStatus } from '@platform/contract';

/** Dispute statuses under which the money is held back or lost (Stripe's `won`, `warning_closed`, `prevented` are not). */
const DISPUTED = new Set([
  'warning_needs_response',
  'warning_under_review',
  'needs_response',
  'under_review',
  'lost',
]);

/**
 * One status per purchase, the most serious first: an open or lost dispute,
 * then refunds (all or part of the amount), then the payment itself.
 */
export function purchaseStatus(p: {
  paymentStatus: string;
  amountTotal: number;
  amountRefunded: number;
  disputeStatus: string | null;
}): PurchaseStatus {
  if (p.disputeStatus !== null && DISPUTED.has(p.disputeStatus)) return 'disputed';
  if (p.amountRefunded > 0) return p.amountRefunded >= p.amountTotal ? 'refunded' : 'partially_refunded';
  if (p.paymentStatus === 'pending' || p.paymentStatus === 'failed') return p.paymentStatus;
  return 'paid';
}
