import { EnvError } from '@platform/service-kit';
import { loadPaymentEnv } from './env';

const base = { PAYMENT_MS_API_KEY: 'a-key-of-sixteen-chars', STRIPE_SECRET_KEY: 'sk_test_123' };

describe('loadPaymentEnv', () => {
  it('refuses to start without PAYMENT_MS_API_KEY, naming it', () => {
    for (const missing of [undefined, '', ' , ']) {
      expect(() => loadPaymentEnv({ STRIPE_SECRET_KEY: 'sk_test_123', PAYMENT_MS_API_KEY: missing })).toThrow(
        expect.objectContaining({ problems: [expect.stringMatching(/^PAYMENT_MS_API_KEY: /)] }),
      );
    }
  });

  it('refuses production without DATABASE_URL and REDIS_URL, naming both', () => {
    expect(() => loadPaymentEnv({ ...base, NODE_ENV: 'production' })).toThrow(
      expect.objectContaining({
        problems: [
          expect.stringMatching(/^DATABASE_URL: required in production/),
          expect.stringMatching(/^REDIS_URL: required in production/),
        ],
      }),
    );
    expect(
      loadPaymentEnv({
        ...base,
        NODE_ENV: 'production',
        DATABASE_URL: 'postgresql://payment@db:5432/payment',
        REDIS_URL: 'redis://redis:6379/0',
      }).NODE_ENV,
    ).toBe('production');
  });

  it('reads a comma-separated key list for rotation', () => {
    expect(
      loadPaymentEnv({ ...base, PAYMENT_MS_API_KEY: 'old-key-0123456789, new-key-0123456789' })
        .PAYMENT_MS_API_KEY,
    ).toEqual(['old-key-0123456789', 'new-key-0123456789']);
  });

  it('refuses a short key and a non-Stripe secret', () => {
    expect(() => loadPaymentEnv({ ...base, PAYMENT_MS_API_KEY: 'short' })).toThrow(EnvError);
    expect(() => loadPaymentEnv({ ...base, STRIPE_SECRET_KEY: 'pk_test_123' })).toThrow(EnvError);
  });

  it('applies the documented defaults', () => {
    expect(loadPaymentEnv(base)).toMatchObject({
      PORT: 3001,
      PAYMENT_SUBSCRIPTION_MAX_AGE_SECONDS: 3600,
      PAYMENT_RATE_LIMIT_PER_MINUTE: 600,
      STRIPE_TIMEOUT_MS: 20_000,
      STRIPE_MAX_NETWORK_RETRIES: 2,
    });
  });
});
