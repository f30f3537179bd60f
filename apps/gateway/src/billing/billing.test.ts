import { createMemoryStore } from '@platform/db';
import { createHttpMetrics, createLogger, createMemoryDestination } from '@platform/logging';
import { DEFAULT_LANES_CONFIG } from '../ai/config/default-lanes';
import { loadGatewayEnv } from '../env';
import { createBilling } from './billing';

describe('where usage goes', () => {
  it("the built-in lanes state their billing mode, and start-up logs where each lane's usage goes", async () => {
    for (const lane of Object.values(DEFAULT_LANES_CONFIG.lanes)) expect(lane.billing.mode).toBe('metered');
    expect(DEFAULT_LANES_CONFIG.media_billing.mode).toBe('metered');

    const logs = createMemoryDestination();
    const billing = createBilling({
      env: loadGatewayEnv({
        NODE_ENV: 'test',
        GATEWAY_SECRET: 'a'.repeat(32),
        PAYMENT_URL: 'http://127.0.0.1:9',
        PAYMENT_API_KEY: 'payment-key-for-the-test',
        BILLING_SHIPPER: 'off',
        BILLING_METER: 'tokens',
      }),
      lanes: {
        lanes: { ...DEFAULT_LANES_CONFIG.lanes, gold: { billing: { mode: 'paid', product: 'prod_gold' } } },
        media_billing: { ...DEFAULT_LANES_CONFIG.media_billing, meter: 'media_cost' },
      },
      logger: createLogger({ service: 'test', destination: logs }),
      kv: createMemoryStore(),
      clock: () => Date.now(),
      registry: createHttpMetrics({ service: 'test', defaultMetrics: false }).registry,
      feed: async () => ({ rows: [], last: null }),
      cursor: { acquire: async () => null, advance: async () => false, release: async () => undefined },
    });
    await billing.close();
    const line = logs.lines.find((l) => l.includes('where usage goes') || l.includes('nothing is shipped'));
    expect(line).toBeDefined();
    const { lanes } = JSON.parse(line ?? '{}') as { lanes: Record<string, string> };
    expect(lanes.standard).toMatch(
      /^metered: meter tokens, by total_tokens; users without a billable subscription are held/,
    );
    expect(lanes.gold).toMatch(
      /^paid: meter tokens, .*only users whose subscription has a price on that meter/,
    );
    expect(Object.keys(lanes).sort()).toEqual(['free', 'gold', 'media', 'premium', 'standard']);
  });

  describe('media cost never lands on a meter of tokens', () => {
    const start = (
      env: Record<string, string>,
      media_billing?: Parameters<typeof createBilling>[0]['lanes']['media_billing'],
    ) =>
      createBilling({
        env: loadGatewayEnv({
          NODE_ENV: 'test',
          GATEWAY_SECRET: 'a'.repeat(32),
          PAYMENT_URL: 'http://127.0.0.1:9',
          PAYMENT_API_KEY: 'payment-key-for-the-test',
          BILLING_SHIPPER: 'off',
          ...env,
        }),
        lanes: { lanes: DEFAULT_LANES_CONFIG.lanes, media_billing },
        logger: createLogger({ service: 'test', destination: createMemoryDestination() }),
        kv: createMemoryStore(),
        clock: () => Date.now(),
        registry: createHttpMetrics({ service: 'test', defaultMetrics: false }).registry,
        feed: async () => ({ rows: [], last: null }),
        cursor: { acquire: async () => null, advance: async () => false, release: async () => undefined },
      });

    it("refuses to start when media would be billed by cost on the lanes' tokens meter", () => {
      expect(() => start({}, DEFAULT_LANES_CONFIG.media_billing)).toThrow(
        /media requests are billed by cost_micros but the lanes' meter counts total_tokens: give media_billing \(or BILLING_MEDIA_METER\) a meter of its own/,
      );
      expect(() => start({}, undefined)).toThrow(/a meter of its own/);
    });

    it('starts when media has its own meter, bills by the same unit, is free, or nothing ships', async () => {
      for (const [env, media] of [
        [{}, { mode: 'metered', meter: 'media_cost' }],
        [{ BILLING_QUANTITY: 'cost_micros' }, { mode: 'metered' }],
        [{}, { mode: 'free' }],
        [{ BILLING_MEDIA_METER: 'ai_media_cost' }, { mode: 'metered' }],
        [{ BILLING_MEDIA_METER: 'ai_media_cost' }, undefined],
      ] as const) {
        const billing = start(env, media);
        await billing.close();
      }
      const unconfigured = createBilling({
        env: loadGatewayEnv({ NODE_ENV: 'test', GATEWAY_SECRET: 'a'.repeat(32) }),
        lanes: { lanes: DEFAULT_LANES_CONFIG.lanes, media_billing: DEFAULT_LANES_CONFIG.media_billing },
        logger: createLogger({ service: 'test', destination: createMemoryDestination() }),
        kv: createMemoryStore(),
        clock: () => Date.now(),
        registry: createHttpMetrics({ service: 'test', defaultMetrics: false }).registry,
        feed: async () => ({ rows: [], last: null }),
        cursor: { acquire: async () => null, advance: async () => false, release: async () => undefined },
      });
      await unconfigured.close();
    });
  });
});
