import {
  describeWith,
  expectStorageOutageAnswered,
  needPrivateStorage,
  type PrivateStorage,
  type StorageOutage,
} from '@platform/testing';
import request from 'supertest';
import { type AiHarness, startAiHarness, type TestCaller } from './support/ai-harness';
import { GATEWAY_ENDPOINTS } from './support/endpoints';

/**
 * Redis or Postgres stopped under load: every endpoint answers within 2 s with
 * the status docs/reliability.md promises, never 500; when the server returns,
 * the same app recovers without a restart. The test owns both servers.
 */
const privateStorage = needPrivateStorage();
let storage: PrivateStorage;
let h: AiHarness;
let caller: TestCaller;
let url: string;

beforeAll(async () => {
  storage = await privateStorage.start();
  h = await startAiHarness({}, storage.urls);
  caller = await h.createCaller();
  ({ url } = await h.listen());
}, 120_000);
afterAll(() => storage?.close(async () => h?.close()), 30_000);

const HTML_PAGES = ['GET /api/v1/auth/magic-link'];

const SERVED = [200];
const UNAVAILABLE = [503];

/** docs/reliability.md, "Redis down". Sessions live in Postgres, so cookie endpoints keep working. */
const REDIS_DOWN: Record<string, number[]> = {
  'GET /health': SERVED,
  'GET /health/ready': UNAVAILABLE,
  'GET /openapi.json': SERVED,
  'GET /api/v1/auth/magic-link': [400],
  'POST /api/v1/auth/request-magic-link': UNAVAILABLE,
  'POST /api/v1/auth/verify-code': UNAVAILABLE,
  'GET /api/v1/auth/session': SERVED,
  'GET /api/v1/me (session)': SERVED,
  'GET /api/v1/me (api key)': UNAVAILABLE,
  'POST /api/v1/auth/api-keys': [201, 400],
  'GET /api/v1/auth/api-keys/list': SERVED,
  'POST /api/v1/auth/api-keys/revoke': [404],
  'POST /api/v1/auth/api-keys/rules': [404],
  'GET /api/v1/audit': SERVED,
  'GET /api/v1/audit/export': SERVED,
  'POST /api/v1/keys': UNAVAILABLE,
  'GET /api/v1/keys': UNAVAILABLE,
  'DELETE /api/v1/keys/{provider}': UNAVAILABLE,
  'GET /api/v1/usage': UNAVAILABLE,
  'POST /api/v1/ai/chat/completions': UNAVAILABLE,
  'POST /api/v1/ai/chat/stream': UNAVAILABLE,
  'POST /api/v1/ai/image': UNAVAILABLE,
  'POST /api/v1/ai/tts': UNAVAILABLE,
  'POST /api/v1/ai/music': UNAVAILABLE,
  'POST /api/v1/ai/soundfx': UNAVAILABLE,
};

/** docs/reliability.md, "Postgres down". */
const POSTGRES_DOWN: Record<string, number[]> = Object.fromEntries(
  Object.keys(REDIS_DOWN).map((name) => [name, UNAVAILABLE]),
);
Object.assign(POSTGRES_DOWN, {
  'GET /health': SERVED,
  'GET /health/ready': UNAVAILABLE,
  'GET /openapi.json': SERVED,
  'GET /api/v1/auth/magic-link': [400],
  // Codes live in Redis; the account is only touched when a valid code is verified.
  'POST /api/v1/auth/request-magic-link': [202],
  'POST /api/v1/auth/verify-code': [400],
});

const canSignInAndCall = async () => {
  const link = await request(url)
    .post('/api/v1/auth/request-magic-link')
    .set('X-Forwarded-For', '10.99.0.1')
    .send({ email: `back-${Date.now()}@example.com` });
  const me = await request(url).get('/api/v1/me').set('x-api-key', caller.apiKey);
  const session = await request(url).get('/api/v1/auth/session').set('Cookie', caller.cookie);
  return link.status === 202 && me.status === 200 && session.status === 200;
};

const outage = (): StorageOutage => ({
  service: 'gateway',
  storage,
  url,
  probes: GATEWAY_ENDPOINTS.map((e) => ({ name: e.name, send: () => e.send(url, caller) })),
  expected: { Redis: REDIS_DOWN, Postgres: POSTGRES_DOWN },
  htmlPages: HTML_PAGES,
  recovered: canSignInAndCall,
});

describeWith(privateStorage)('gateway with a storage server stopped', () => {
  it.each(['Redis', 'Postgres'] as const)(
    '%s: every endpoint answers within 2 s as documented, never 500; recovery without restart',
    (kind) => expectStorageOutageAnswered(kind, outage()),
    30_000,
  );
});
