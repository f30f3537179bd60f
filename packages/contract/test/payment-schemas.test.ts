import { z } from 'zod';
import {
  classifyZodError,
  EXAMPLE_REQUEST_ID,
  isHttpUrl,
  SUBSCRIPTION_NONE,
  ZCreateCartCheckoutRequest,
  ZCreateItemCheckoutRequest,
  ZCreatePortalSessionRequest,
  ZCreateSubscriptionCheckoutRequest,
  ZErrorBody,
  ZHealthResponse,
  ZHttpUrl,
  ZIdempotencyKey,
  ZSubscriptionStatusParams,
  ZSubscriptionStatusResponse,
} from '../src';

const base = {
  user_id: 'user_1',
  email: 'ada@example.com',
  success_url: 'https://app.example.com/ok',
  cancel_url: 'http://localhost:3000/cancel',
};

describe('ZHttpUrl', () => {
  it.each([
    'https://example.com',
    'http://localhost:3000/path?q=1#frag',
    'HTTPS://EXAMPLE.COM/Upper',
    'https://[::1]:8443/x',
  ])('accepts the absolute http(s) URL %s', (url) => {
    expect(ZHttpUrl.safeParse(url).success).toBe(true);
  });

  it.each([
    ['javascript:alert(1)'],
    ['data:text/html,hi'],
    ['ftp://example.com/file'],
    ['file:///etc/passwd'],
    ['mailto:a@example.com'],
    ['//example.com/protocol-relative'],
    ['/relative/path'],
    ['http:example.com'],
    ['https://'],
    ['https://user:secret@example.com/'],
    [' https://example.com'],
    ['https://example.com/a b'],
    ['https://example.com/\nnext'],
    ['not a url'],
  ])('refuses %j', (url) => {
    expect(ZHttpUrl.safeParse(url).success).toBe(false);
    expect(isHttpUrl(url)).toBe(false);
  });

  it('refuses URLs longer than 2048 characters and accepts exactly 2048', () => {
    const prefix = 'https://example.com/';
    expect(ZHttpUrl.safeParse(prefix + 'a'.repeat(2048 - prefix.length)).success).toBe(true);
    expect(ZHttpUrl.safeParse(prefix + 'a'.repeat(2049 - prefix.length)).success).toBe(false);
  });
});

describe('checkout requests', () => {
  it('defaults quantity of an item checkout to 1', () => {
    const parsed = ZCreateItemCheckoutRequest.parse({ ...base, price_id: 'price_1' });
    expect(parsed.quantity).toBe(1);
  });

  it.each([0, -1, 1.5, 1_000_000])('refuses item quantity %p', (quantity) => {
    expect(ZCreateItemCheckoutRequest.safeParse({ ...base, price_id: 'price_1', quantity }).success).toBe(
      false,
    );
  });

  it('accepts the Stripe maximum quantity 999999', () => {
    expect(ZCreateItemCheckoutRequest.parse({ ...base, price_id: 'p', quantity: 999_999 }).quantity).toBe(
      999_999,
    );
  });

  it('requires every subscription field', () => {
    const full = { ...base, product_id: 'prod_1', price_id: 'price_1' };
    expect(ZCreateSubscriptionCheckoutRequest.parse(full)).toEqual(full);
    for (const field of Object.keys(full)) {
      const { [field]: _omitted, ...rest } = full as Record<string, string>;
      expect({ field, ok: ZCreateSubscriptionCheckoutRequest.safeParse(rest).success }).toEqual({
        field,
        ok: false,
      });
    }
  });

  it('refuses an invalid e-mail, an empty user_id and an over-long id', () => {
    const ok = { ...base, product_id: 'prod_1', price_id: 'price_1' };
    expect(ZCreateSubscriptionCheckoutRequest.safeParse({ ...ok, email: 'not-an-email' }).success).toBe(
      false,
    );
    expect(ZCreateSubscriptionCheckoutRequest.safeParse({ ...ok, user_id: '' }).success).toBe(false);
    expect(ZCreateSubscriptionCheckoutRequest.safeParse({ ...ok, price_id: 'p'.repeat(256) }).success).toBe(
      false,
    );
    expect(
      ZCreateSubscriptionCheckoutRequest.safeParse({ ...ok, email: `${'a'.repeat(250)}@x.io` }).success,
    ).toBe(false);
  });

  it('requires quantity in every cart item and 1 to 100 items', () => {
    const item = { price_id: 'price_1', quantity: 2 };
    expect(ZCreateCartCheckoutRequest.safeParse({ ...base, items: [item] }).success).toBe(true);
    expect(ZCreateCartCheckoutRequest.safeParse({ ...base, items: [{ price_id: 'price_1' }] }).success).toBe(
      false,
    );
    expect(ZCreateCartCheckoutRequest.safeParse({ ...base, items: [] }).success).toBe(false);
    expect(ZCreateCartCheckoutRequest.safeParse({ ...base, items: Array(100).fill(item) }).success).toBe(
      true,
    );
    expect(ZCreateCartCheckoutRequest.safeParse({ ...base, items: Array(101).fill(item) }).success).toBe(
      false,
    );
  });

  it('refuses a portal return_url with another scheme', () => {
    expect(
      ZCreatePortalSessionRequest.safeParse({ user_id: 'u', return_url: 'https://a.example/' }).success,
    ).toBe(true);
    expect(ZCreatePortalSessionRequest.safeParse({ user_id: 'u', return_url: 'javascript:x' }).success).toBe(
      false,
    );
  });

  it('limits the Idempotency-Key to 1..255 characters', () => {
    expect(ZIdempotencyKey.safeParse('').success).toBe(false);
    expect(ZIdempotencyKey.safeParse('k'.repeat(255)).success).toBe(true);
    expect(ZIdempotencyKey.safeParse('k'.repeat(256)).success).toBe(false);
  });
});

describe('responses', () => {
  it('SUBSCRIPTION_NONE is the spec none form and a valid status response', () => {
    expect(ZSubscriptionStatusResponse.parse(SUBSCRIPTION_NONE)).toEqual({
      status: 'none',
      subscription_id: '',
      current_period_end: '0001-01-01T00:00:00Z',
      product_id: '',
    });
  });

  it('refuses an unknown subscription status and a non-UTC period end', () => {
    const ok = {
      status: 'active',
      subscription_id: 's',
      current_period_end: '2026-12-01T00:00:00Z',
      product_id: 'p',
    };
    expect(ZSubscriptionStatusResponse.safeParse(ok).success).toBe(true);
    expect(ZSubscriptionStatusResponse.safeParse({ ...ok, status: 'paused' }).success).toBe(false);
    expect(
      ZSubscriptionStatusResponse.safeParse({ ...ok, current_period_end: '2026-12-01T00:00:00+02:00' })
        .success,
    ).toBe(false);
  });

  it('path params refuse an empty user_id', () => {
    expect(ZSubscriptionStatusParams.safeParse({ user_id: '', product_id: 'p' }).success).toBe(false);
  });

  it('health and error bodies have the documented shape', () => {
    expect(
      ZHealthResponse.safeParse({ status: 'ok', timestamp: new Date().toISOString(), service: 'x' }).success,
    ).toBe(true);
    expect(
      ZErrorBody.parse({ error: 'not found', code: 'not_found', request_id: EXAMPLE_REQUEST_ID }),
    ).toEqual({
      error: 'not found',
      code: 'not_found',
      request_id: EXAMPLE_REQUEST_ID,
    });
    expect(ZErrorBody.safeParse({ error: 'x', code: 'x', request_id: 'not-a-uuid' }).success).toBe(false);
  });
});

describe('classifyZodError', () => {
  const schema = z.object({ quantity: z.number().int() });
  it('calls a fractional integer field a rule violation (400), a string a type error (422)', () => {
    const fractional = schema.safeParse({ quantity: 1.5 });
    const text = schema.safeParse({ quantity: '1' });
    expect(fractional.success || classifyZodError(fractional.error)).toBe('validation_failed');
    expect(text.success || classifyZodError(text.error)).toBe('deserialization_error');
  });
});
