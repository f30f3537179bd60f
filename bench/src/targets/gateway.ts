import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
// The same lanes and server keys as the gateway's integration tests: one model per target.
import {
  createApiKey,
  GATEWAY_MIGRATIONS_DIR,
  PrismaClient,
  SERVER_KEYS,
  startGatewayInstance,
  TEST_LANES,
  type UsageLedger,
  upsertUserByEmail,
} from '@platform/gateway/testing';
import { createLogger } from '@platform/logging';
import {
  createTestDatabase,
  createTestKv,
  type OpenAIFake,
  startElevenLabsFake,
  startOpenAIFake,
  type TestDatabase,
} from '@platform/testing';
import { listenOnLoopback, trimRequestLog } from './listen';
import { createLogSink, type LogSink } from './log-sink';

/** The chunks the OpenAI fake streams (and joins for plain chat): "a few chunks". */
export const STREAM_CHUNKS = ['Hello', ' from', ' the', ' bench', 'mark.'];

/** Server-held provider keys, as in the harness. */
/** The gateway on loopback with its fakes and one API key. */
export type GatewayTarget = {
  url: string;
  /**
   * A second app on the same database, store and fakes whose usage ledger
   * records nothing: an ablation that shows what usage recording costs on chat.
   */
  urlWithoutUsageRows: string;
  apiKey: string;
  openai: OpenAIFake;
  /** Requests the OpenAI fake has received so far (its log is trimmed). */
  upstreamCalls(): number;
  database: TestDatabase;
  kvKind: 'redis' | 'memory';
  logs: LogSink;
  close(): Promise<void>;
};

/**
 * Builds the gateway the way apps/gateway/test/support/ai-harness.ts does
 * (same env, fakes, createTestDatabase/createTestKv, startGatewayInstance), except: the
 * log goes to a counting sink at `info` as in production, the usage ledger
 * is the production one (Redis stream or direct Postgres), and the rate limit
 * and budgets are set out of reach (still reserved and settled on every request).
 */
export async function startGatewayTarget(): Promise<GatewayTarget> {
  const openai = await startOpenAIFake({ behaviour: { chunks: STREAM_CHUNKS } });
  const elevenlabs = await startElevenLabsFake();
  const upstream = trimRequestLog(openai.requests);
  const database = await createTestDatabase({ migrationsDir: GATEWAY_MIGRATIONS_DIR });
  const prisma = new PrismaClient({ adapter: database.adapter });
  const kv = createTestKv();
  const logs = createLogSink();
  const logger = createLogger({ service: 'gateway', destination: logs, level: 'info' });
  const lanesFile = path.join(mkdtempSync(path.join(tmpdir(), 'bench-gw-')), 'lanes.json');
  writeFileSync(lanesFile, JSON.stringify(TEST_LANES));
  const providers = ['openrouter', 'groq', 'cerebras', 'google', 'openai'];
  const baseUrls = [...providers.map((p) => `${p}=${openai.baseURL}`), `elevenlabs=${elevenlabs.url}`];

  const vars = {
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    GATEWAY_PUBLIC_URL: 'http://gateway.test',
    GATEWAY_SECRET: `bench-secret-${randomBytes(16).toString('hex')}`,
    AI_LANES_CONFIG: lanesFile,
    AI_PROVIDER_BASE_URLS: baseUrls.join(','),
    AI_UPSTREAM_TIMEOUT_MS: '5000',
    PROVIDER_KEYS_MASTER_KEYS: `k1:${randomBytes(32).toString('base64')}`,
    // Out of reach: the benchmark measures the checks, never a 429.
    AI_RATE_LIMIT_PER_MINUTE: '1000000000',
    AI_DAILY_TOKEN_BUDGET: '1000000000000000',
    // Lets the bad-key scenarios spread their requests over many client addresses.
    TRUST_PROXY_HOPS: '1',
    ...SERVER_KEYS,
  };
  const gateway = startGatewayInstance({ logger, prisma, kv }, vars);
  const user = await upsertUserByEmail(prisma, `bench-${process.pid}@example.com`);
  const key = await createApiKey(gateway.deps, { userId: user.id, name: 'bench', scope: 'ai' });
  const listening = await listenOnLoopback(gateway.app);
  const dropUsage: UsageLedger = { append: async () => {}, flush: async () => {}, close: async () => {} };
  const ablation = startGatewayInstance({ logger, prisma, kv }, vars, { ledgerAdapter: dropUsage });
  const listeningWithoutUsage = await listenOnLoopback(ablation.app);

  return {
    url: listening.url,
    urlWithoutUsageRows: listeningWithoutUsage.url,
    apiKey: key.key,
    openai,
    upstreamCalls: upstream.count,
    database,
    kvKind: kv.kind,
    logs,
    async close() {
      await listening.close();
      await listeningWithoutUsage.close();
      await gateway.close();
      await ablation.close();
      await prisma.$disconnect();
      await database.drop();
      await kv.close();
      upstream.stop();
      await openai.close();
      await elevenlabs.close();
    },
  };
}
