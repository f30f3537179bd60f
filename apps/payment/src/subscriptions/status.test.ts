import {
  chooseSubscription,
  formatTimestamp,
  type StoredSubscription,
  toSpecStatus,
  toStatusResponse,
} from './status';

function sub(id: string, status: string, created: number, periodEnd: Date | null = null): StoredSubscription {
  return {
    id,
    status,
    currentPeriodEnd: null,
    stripeCreatedAt: new Date(created * 1000),
    syncedAt: new Date(),
    items: [{ productId: 'prod_a', currentPeriodEnd: periodEnd }],
  };
}

describe('toSpecStatus', () => {
  it.each(['active', 'trialing', 'past_due', 'unpaid', 'incomplete', 'canceled', 'incomplete_expired'])(
    'keeps %s',
    (status) => expect(toSpecStatus(status)).toBe(status),
  );
  it('maps paused to unpaid and an unknown status to incomplete', () => {
    expect(toSpecStatus('paused')).toBe('unpaid');
    expect(toSpecStatus('something_new')).toBe('incomplete');
  });
});

describe('chooseSubscription', () => {
  it('follows active > trialing > past_due > unpaid > incomplete > canceled > incomplete_expired', () => {
    // Spelled out here rather than imported, so the test states the spec's order itself.
    const order = 'active trialing past_due unpaid incomplete canceled incomplete_expired'.split(' ');
    // Newest first in the input, so only the status can explain the choice.
    const all = [...order].reverse().map((status, i) => sub(status, status, 1000 - i));
    for (const expected of order) {
      expect(chooseSubscription(all)?.status).toBe(expected);
      all.splice(
        all.findIndex((s) => s.status === expected),
        1,
      );
    }
    expect(chooseSubscription(all)).toBeUndefined();
  });

  it('picks the newest of equally entitling subscriptions', () => {
    expect(chooseSubscription([sub('old', 'active', 1), sub('new', 'active', 2)])?.id).toBe('new');
  });

  it('ranks paused with unpaid, below past_due', () => {
    expect(chooseSubscription([sub('p', 'paused', 2), sub('d', 'past_due', 1)])?.id).toBe('d');
  });
});

describe('toStatusResponse', () => {
  it('prefers the item period end and formats whole seconds with Z', () => {
    const s = {
      ...sub('sub_1', 'active', 1, new Date('2026-12-21T10:00:00Z')),
      currentPeriodEnd: new Date(0),
    };
    expect(toStatusResponse(s, 'prod_a')).toEqual({
      status: 'active',
      subscription_id: 'sub_1',
      current_period_end: '2026-12-21T10:00:00Z',
      product_id: 'prod_a',
    });
  });

  it('falls back to the subscription period end, then to the zero timestamp', () => {
    const legacy = { ...sub('sub_1', 'active', 1), currentPeriodEnd: new Date('2027-01-01T00:00:00Z') };
    expect(toStatusResponse(legacy, 'prod_a').current_period_end).toBe('2027-01-01T00:00:00Z');
    expect(toStatusResponse(sub('sub_2', 'active', 1), 'prod_a').current_period_end).toBe(
      '0001-01-01T00:00:00Z',
    );
  });

  it('formatTimestamp keeps milliseconds that are not zero', () => {
    expect(formatTimestamp(new Date('2026-01-01T00:00:00.250Z'))).toBe('2026-01-01T00:00:00.250Z');
  });
});
