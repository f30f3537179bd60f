import { randomBytes } from 'node:crypto';
import {
  type OpenAIFake,
  type SmtpCapture,
  type StripeFake,
  startOpenAIFake,
  startSmtpCapture,
  startStripeFake,
} from '@platform/testing';

const PROVIDERS = ['openrouter', 'groq', 'cerebras', 'google', 'openai'];

/** The fakes the services talk to: Stripe (payment), OpenAI and SMTP (gateway). */
export type Fakes = { stripe: StripeFake; openai: OpenAIFake; smtp: SmtpCapture };

export async function startFakes(): Promise<Fakes> {
  const [stripe, openai, smtp] = await Promise.all([
    startStripeFake(),
    startOpenAIFake(),
    startSmtpCapture(),
  ]);
  return { stripe, openai, smtp };
}

/** Closes what startFakes started (none of it, if it never ran). */
export async function closeFakes(fakes: Fakes | undefined): Promise<void> {
  await Promise.all([fakes?.stripe.close(), fakes?.openai.close(), fakes?.smtp.close()]);
}

/**
 * Seeds the token meter `event` and a metered monthly price `price` (1 per token) of
 * product `product` on it: usage reaches an invoice only through such a price.
 */
export function seedTokenMeter(
  fakes: Fakes,
  ids: { event: string; product: string; price: string },
): { id: string } {
  const meter = fakes.stripe.meters.seed({ event_name: ids.event, display_name: 'AI tokens' });
  const tokens = fakes.stripe.seedProduct({ id: ids.product, name: 'AI tokens' });
  fakes.stripe.seedPrice({
    id: ids.price,
    product: tokens.id,
    unit_amount: 1,
    recurring: { interval: 'month', meter: meter.id },
  });
  return meter;
}

/** Payment's env for the Stripe fake (no retries, so a failure shows at once). */
export function paymentFakeEnv(fakes: Fakes): Record<string, string> {
  // The fake takes test-mode keys only, and these services run with NODE_ENV=production.
  return {
    STRIPE_API_BASE: fakes.stripe.url,
    STRIPE_MAX_NETWORK_RETRIES: '0',
    PAYMENT_ALLOW_TEST_KEY_IN_PRODUCTION: 'true',
  };
}

/**
 * The gateway's env for the fakes: server keys and base URLs of every provider
 * pointing at the OpenAI fake, SMTP at the capture, new secrets, and the
 * public base URL its links carry.
 */
export function gatewayFakeEnv(fakes: Fakes, publicUrl: string): Record<string, string> {
  return {
    ...Object.fromEntries(PROVIDERS.map((p) => [`${p.toUpperCase()}_API_KEY`, `sk-e2e-${p}-server-key`])),
    GATEWAY_PUBLIC_URL: publicUrl,
    GATEWAY_SECRET: randomBytes(32).toString('hex'),
    SMTP_URL: fakes.smtp.url,
    AI_PROVIDER_BASE_URLS: PROVIDERS.map((p) => `${p}=${fakes.openai.baseURL}`).join(','),
    PROVIDER_KEYS_MASTER_KEYS: `k1:${randomBytes(32).toString('base64')}`,
    // The tests' Redis is throw-away (no AOF): a production start would refuse it (usage/redis-keeps-money.ts).
    REDIS_PERSISTENCE_MANAGED: 'true',
  };
}
