import {
  describeWith,
  type EndpointProbe,
  expectStorageOutageAnswered,
  type LoopbackServer,
  listenLoopback,
  needPrivateStorage,
  type PrivateStorage,
} from '@platform/testing';
import { paymentEndpoints } from './support/endpoints';
import { type Harness, startHarness } from './support/harness';

/**
 * Redis or Postgres stopped under load: every endpoint answers within 2 s with
 * the status docs/reliability.md promises, never 500; when the server returns,
 * the same app recovers without a restart. The test owns both servers.
 */
const privateStorage = needPrivateStorage();
let storage: PrivateStorage;
let h: Harness;
let server: LoopbackServer;
let probes: EndpointProbe[];

beforeAll(async () => {
  storage = await privateStorage.start();
  h = await startHarness(storage.urls);
  server = await listenLoopback(h.app);
  probes = (await paymentEndpoints(h)).map((e) => ({ name: e.name, send: () => e.send(server.url) }));
}, 120_000);
afterAll(async () => {
  await server?.close();
  await storage?.close(async () => h?.close());
}, 60_000);

const SERVED = [200];
const UNAVAILABLE = [503];
const PUBLIC = {
  'GET /health': SERVED,
  'GET /openapi.json': SERVED,
  'GET /docs': SERVED,
  'GET /metrics': SERVED,
};

/** docs/reliability.md, "Redis down": the per-key rate limit lives in Redis and fails closed. */
const REDIS_DOWN: Record<string, number[]> = {
  ...PUBLIC,
  'GET /health/ready': UNAVAILABLE,
  'POST /api/v1/checkout/subscription': UNAVAILABLE,
  'POST /api/v1/checkout/item': UNAVAILABLE,
  'POST /api/v1/checkout/cart': UNAVAILABLE,
  'GET /api/v1/subscriptions/{user_id}/{product_id}': UNAVAILABLE,
  'POST /api/v1/portal': UNAVAILABLE,
  'GET /api/v1/purchases/{user_id}': UNAVAILABLE,
  'GET /api/v1/entitlements/{user_id}': UNAVAILABLE,
  'POST /api/v1/sync/{user_id}': UNAVAILABLE,
  'POST /webhooks/stripe': SERVED,
};

/** docs/reliability.md, "Postgres down": the same, and webhooks cannot be recorded. */
const POSTGRES_DOWN: Record<string, number[]> = { ...REDIS_DOWN, 'POST /webhooks/stripe': UNAVAILABLE };

const statusAnswers = async () => {
  const status = probes.find((p) => p.name.startsWith('GET /api/v1/subscriptions'));
  const res = await status!.send();
  return res.status === 200;
};

describeWith(privateStorage)('payment with a storage server stopped', () => {
  it.each(['Redis', 'Postgres'] as const)(
    '%s: every endpoint answers within 2 s as documented, never 500; recovery without restart',
    (kind) =>
      expectStorageOutageAnswered(kind, {
        service: 'payment',
        storage,
        url: server.url,
        probes,
        expected: { Redis: REDIS_DOWN, Postgres: POSTGRES_DOWN },
        recovered: statusAnswers,
      }),
    30_000,
  );
});
