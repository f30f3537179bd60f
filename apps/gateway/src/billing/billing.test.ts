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
        media_billing: DEFAULT_LANES_CONFIG.media_billing,
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
});
