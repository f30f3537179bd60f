import { purchaseStatus } from './status';

const base = { paymentStatus: 'paid', amountTotal: 1000, amountRefunded: 0, disputeStatus: null };

describe('purchaseStatus', () => {
  it('reports the payment state without refunds or disputes', () => {
    expect(purchaseStatus(base)).toBe('paid');
    expect(purchaseStatus({ ...base, paymentStatus: 'pending' })).toBe('pending');
    expect(purchaseStatus({ ...base, paymentStatus: 'failed' })).toBe('failed');
  });
  it('a refund of part or all of the amount', () => {
    expect(purchaseStatus({ ...base, amountRefunded: 400 })).toBe('partially_refunded');
    expect(purchaseStatus({ ...base, amountRefunded: 1000 })).toBe('refunded');
  });
  it('an open or lost dispute wins; a won one does not count', () => {
    expect(purchaseStatus({ ...base, amountRefunded: 400, disputeStatus: 'needs_response' })).toBe(
      'disputed',
    );
    expect(purchaseStatus({ ...base, disputeStatus: 'lost' })).toBe('disputed');
    expect(purchaseStatus({ ...base, disputeStatus: 'won' })).toBe('paid');
  });
});
