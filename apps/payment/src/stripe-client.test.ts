import { placeholderStripeKeyWarning } from './stripe-client';

describe('placeholder Stripe key at start', () => {
  it.each(['sk_test_local_placeholder', 'sk_test_replace_me'])(
    'the stand-in key %s gets a warning that says how to use a test key',
    (key) => {
      const warning = placeholderStripeKeyWarning({ STRIPE_SECRET_KEY: key, STRIPE_API_BASE: undefined });
      expect(warning).toContain(`STRIPE_SECRET_KEY is the placeholder ${key}`);
      expect(warning).toContain('https://dashboard.stripe.com/test/apikeys');
      expect(warning).toContain('STRIPE_SECRET_KEY=sk_test_');
    },
  );

  it('a real-looking key gets none', () => {
    expect(
      placeholderStripeKeyWarning({ STRIPE_SECRET_KEY: 'sk_test_51Hx9abc', STRIPE_API_BASE: undefined }),
    ).toBeUndefined();
  });

  it('a Stripe stand-in (STRIPE_API_BASE, as in tests) gets none', () => {
    expect(
      placeholderStripeKeyWarning({
        STRIPE_SECRET_KEY: 'sk_test_local_placeholder',
        STRIPE_API_BASE: 'http://127.0.0.1:12111',
      }),
    ).toBeUndefined();
  });
});
