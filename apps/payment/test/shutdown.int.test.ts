import { createServer } from 'node:http';
import { createLogger, createMemoryDestination } from '@platform/logging';
import { createGracefulShutdown } from '@platform/service-kit';
import { createApp } from '../src/app';
import { createStripeClient } from '../src/stripe-client';
import {
  API_KEY,
  type Harness,
  newUserId,
  seedCatalog,
  startHarness,
  testEnv,
  urls,
} from './support/harness';

/**
 * SIGTERM while a checkout waits for a hung Stripe (the routine runServer
 * installs, with a spy for process.exit): at the drain deadline the request is
 * answered 503 `service unavailable` with Retry-After instead of having its
 * socket cut, the Stripe call is aborted (not left to its 20 s timeout), and
 * the process exits 0.
 */
let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

describe('graceful shutdown with a hung Stripe', () => {
  it('answers the waiting request 503 with Retry-After at the drain deadline and aborts its Stripe call', async () => {
    const logs = createMemoryDestination();
    const logger = createLogger({ service: 'payment', destination: logs });
    // Stripe's own timeout is far beyond the drain deadline: only the abort can end the call in time.
    const env = testEnv(h.fake, { STRIPE_TIMEOUT_MS: '20000' });
    const drainDeadline = new AbortController();
    const stripe = createStripeClient(env, { abortSignal: drainDeadline.signal });
    const app = createApp({ ...h.deps(), env, logger, stripe });
    const server = createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;

    let exitCode: number | undefined;
    const shutdown = createGracefulShutdown(server, {
      logger,
      drainMs: 500,
      onClose: async () => {},
      onDrainDeadline: () => drainDeadline.abort(),
      exit: (code) => {
        exitCode = code;
      },
    });

    const { product, monthly } = seedCatalog(h.fake);
    h.fake.hang({ method: 'POST' });
    const before = h.fake.requests.length;
    const pending = fetch(`${url}/api/v1/checkout/subscription`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': API_KEY },
      body: JSON.stringify({
        user_id: newUserId(),
        email: 'ada@example.com',
        product_id: product.id,
        price_id: monthly.id,
        ...urls,
      }),
    });
    // Wait until the request is stuck at Stripe, then stop.
    for (let i = 0; i < 200 && h.fake.requests.length === before; i++)
      await new Promise((r) => setTimeout(r, 10));
    await new Promise((r) => setTimeout(r, 100));
    const stoppedAt = Date.now();
    shutdown('SIGTERM');

    const res = await pending;
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('1');
    const body = (await res.json()) as { error: string; request_id: string };
    expect(body).toEqual({
      error: 'service unavailable',
      code: 'service_unavailable',
      request_id: res.headers.get('x-request-id'),
    });
    expect(Date.now() - stoppedAt).toBeLessThan(3000);

    // The Stripe call failed at once (aborted), long before its 20 s timeout.
    const deadline = Date.now() + 3000;
    while (!logs.text().includes('error after the response was sent') && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(logs.text()).toContain('error after the response was sent');
    expect(logs.text()).not.toMatch(/"level":"error"/);

    await new Promise<void>((resolve) =>
      server.listening ? server.once('close', () => resolve()) : resolve(),
    );
    await new Promise((r) => setImmediate(r));
    expect(exitCode).toBe(0);
    h.fake.clearFaults();
  }, 20_000);
});
