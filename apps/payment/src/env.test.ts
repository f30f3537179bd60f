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
    const prod = { ...base, NODE_ENV: 'production', PAYMENT_ALLOW_TEST_KEY_IN_PRODUCTION: 'true' };
    expect(() => loadPaymentEnv(prod)).toThrow(
      expect.objectContaining({
        problems: [
          expect.stringMatching(/^DATABASE_URL: required in production/),
          expect.stringMatching(/^REDIS_URL: required in production/),
        ],
      }),
    );
    expect(
      loadPaymentEnv({
        ...prod,
        DATABASE_URL: 'postgresql://payment@db:5432/payment',
        REDIS_URL: 'redis://redis:6379/0',
      }).NODE_ENV,
    ).toBe('production');
  });

  it('refuses a test-mode Stripe key in production and a live one in development, unless allowed', () => {
    const prod = {
      ...base,
      NODE_ENV: 'production',
      DATABASE_URL: 'postgresql://payment@db:5432/payment',
      REDIS_URL: 'redis://redis:6379/0',
    };
    for (const key of ['sk_test_123', 'rk_test_123']) {
      expect(() => loadPaymentEnv({ ...prod, STRIPE_SECRET_KEY: key })).toThrow(
        expect.objectContaining({ problems: [expect.stringMatching(/^STRIPE_SECRET_KEY: a test-mode key/)] }),
      );
    }
    expect(
      loadPaymentEnv({ ...prod, PAYMENT_ALLOW_TEST_KEY_IN_PRODUCTION: 'true' })
        .PAYMENT_ALLOW_TEST_KEY_IN_PRODUCTION,
    ).toBe(true);
    expect(loadPaymentEnv({ ...prod, STRIPE_SECRET_KEY: 'sk_live_123' }).STRIPE_SECRET_KEY).toBe(
      'sk_live_123',
    );

    const dev = { ...base, NODE_ENV: 'development', STRIPE_SECRET_KEY: 'rk_live_123' };
    expect(() => loadPaymentEnv(dev)).toThrow(
      expect.objectContaining({ problems: [expect.stringMatching(/^STRIPE_SECRET_KEY: a live-mode key/)] }),
    );
    expect(loadPaymentEnv({ ...dev, PAYMENT_ALLOW_LIVE_KEY_IN_DEVELOPMENT: 'true' }).NODE_ENV).toBe(
      'development',
    );
    expect(loadPaymentEnv({ ...base, NODE_ENV: 'development' }).NODE_ENV).toBe('development');
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

  it.each([
    ['DATABASE_URL', 'redis://127.0.0.1:6379', 'postgres:// or postgresql://'],
    ['REDIS_URL', 'postgresql://127.0.0.1/x', 'redis:// or rediss://'],
    ['STRIPE_API_BASE', 'localhost:12111', 'http:// or https://'],
  ])('%s must use its own scheme, and the message names it', (name, value, schemes) => {
    expect(() => loadPaymentEnv({ ...base, [name]: value })).toThrow(
      expect.objectContaining({ problems: [`${name}: must be a URL starting with ${schemes}`] }),
    );
  });
});
