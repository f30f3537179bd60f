import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Database, KeyValueStore } from '@platform/db';
import { createLogger, createMemoryDestination } from '@platform/logging';
import {
  type AnthropicFake,
  createTestDatabase,
  createTestKv,
  type ElevenLabsFake,
  type LoopbackServer,
  listenLoopback,
  type OpenAIFake,
  type PrivateStorage,
  type RecordedRequest,
  startAnthropicFake,
  startElevenLabsFake,
  startOpenAIFake,
} from '@platform/testing';
import type { Express } from 'express';
import { createApiKey } from '../../src/api-keys/create-api-key';
import { insertSession } from '../../src/auth/session-repo';
import { hashSessionToken } from '../../src/auth/sessions';
import type { GatewayDeps, GatewayDepsOverrides } from '../../src/deps';
import { PrismaClient } from '../../src/generated/prisma/client';
import { upsertUserByEmail } from '../../src/users/repo';
import { GATEWAY_MIGRATIONS_DIR, type GatewayInstance, startGatewayInstance } from './gateway-app';
import { lanesConfig } from './lanes';

export const PUBLIC_URL = 'http://gateway.test';
export const SECRET = 'ai-test-secret-0123456789abcdef-0123';

/** The gateway's own provider keys in tests; each provider has its own, so the fake's log tells them apart. */
export const SERVER_KEYS = {
  OPENROUTER_API_KEY: 'sk-server-openrouter-0001',
  GROQ_API_KEY: 'sk-server-groq-0002',
  CEREBRAS_API_KEY: 'sk-server-cerebras-0003',
  GOOGLE_API_KEY: 'sk-server-google-0004',
  OPENAI_API_KEY: 'sk-server-openai-0005',
  ANTHROPIC_API_KEY: 'sk-ant-server-0007',
  ELEVENLABS_API_KEY: 'xi-server-elevenlabs-0006',
} as const;

/**
 * Lanes for tests: one distinct model per target, so the fake can be scripted
 * per target with `setFor(model, ...)`.
 */
export const TEST_LANES = {
  ...lanesConfig(
    {
      free: ['groq:free-a', 'cerebras:free-b', 'google:free-c'],
      standard: ['openai:std-1', 'openrouter:std-2'],
      premium: ['openai:prem-1'],
    },
    {
      image: ['openai:dall-e-3', 'openrouter:img-2'],
      tts: ['openai:tts-1'],
      music: ['elevenlabs:music_v1'],
      soundfx: ['elevenlabs:sfx_v2'],
    },
  ),
  /** Prices per million tokens = micro-units per token: costs in tests are small whole numbers. */
  prices: {
    'groq/free-a': { input: 1, output: 2, cached_input: 0.5 },
    'cerebras/free-b': { input: 1, output: 2 },
    'google/free-c': { input: 1, output: 2 },
    // Priced at 0 explicitly, so a production start accepts the config (docs/usage-and-budgets.md).
    'openai/std-1': { input: 0, output: 0 },
    'openrouter/std-2': { input: 0, output: 0 },
    'openai/prem-1': { input: 0, output: 0 },
    // Media: dall-e-3, tts-1 and music_v1 keep their built-in prices.
    'openrouter/img-2': { per_image: { standard: { '1024x1024': 0.01 } } },
    'elevenlabs/sfx_v2': { per_second: 0.001, per_request: 0.002 },
  },
};

/** A JSON file in a fresh temp folder; returns its path. */
export function writeTempJson(name: string, value: unknown): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'gw-ai-')), name);
  writeFileSync(file, JSON.stringify(value));
  return file;
}

/** 32 random bytes as a master key entry `id:base64`. */
export function newMasterKey(id: string): string {
  return `${id}:${randomBytes(32).toString('base64')}`;
}

/** AI_PROVIDER_BASE_URLS sending every provider to the fakes; `overrides` redirect single providers. */
export function baseUrlsFor(
  openaiBase: string,
  elevenlabsBase: string,
  overrides: Record<string, string> = {},
  anthropicBase?: string,
): string {
  const urls: Record<string, string> = {
    openrouter: openaiBase,
    groq: openaiBase,
    cerebras: openaiBase,
    google: openaiBase,
    openai: openaiBase,
    elevenlabs: elevenlabsBase,
    ...(anthropicBase ? { anthropic: anthropicBase } : {}),
    ...overrides,
  };
  return Object.entries(urls)
    .map(([name, url]) => `${name}=${url}`)
    .join(',');
}

export type TestCaller = { userId: string; apiKey: string; apiKeyId: string; cookie: string };

export type AiHarness = {
  app: Express;
  deps: GatewayDeps;
  prisma: PrismaClient;
  /** Every statement Prisma has run so far, in order (its `query` events): what a test may require to stay off Prisma. */
  prismaQueries: string[];
  /** Raw SQL on the same pool, as the service's batched inserts use it (with COPY). */
  sql: Database;
  kv: KeyValueStore;
  openai: OpenAIFake;
  elevenlabs: ElevenLabsFake;
  /** The Anthropic Messages fake, behind the `anthropic` provider. */
  anthropic: AnthropicFake;
  /** Every instance's ledger: flush() waits until all records so far are in Postgres. */
  usage: { flush(): Promise<void> };
  logs: ReturnType<typeof createMemoryDestination>;
  /** A new user with an API key and a session cookie. */
  createCaller(): Promise<TestCaller>;
  /** Clears both fakes' scripts and starts a new request log window (the fakes keep their full log). */
  resetFakes(): void;
  /** Requests the OpenAI-compatible fake received since the last resetFakes(). */
  openaiRequests(): RecordedRequest[];
  /** Requests the Anthropic fake received since the last resetFakes(). */
  anthropicRequests(): RecordedRequest[];
  /** Requests the ElevenLabs fake received since the last resetFakes(). */
  elevenlabsRequests(): RecordedRequest[];
  /** The OpenAI fake's waitForRequest/waitForAbort, limited to requests since the last resetFakes(). */
  waitForOpenaiRequest(predicate?: (r: RecordedRequest) => boolean): Promise<RecordedRequest>;
  waitForOpenaiAbort(predicate?: (r: RecordedRequest) => boolean): Promise<RecordedRequest>;
  /** Another app on the same database, store and fakes (another replica or a restart with new env). */
  startInstance(env?: Record<string, string>, overrides?: GatewayDepsOverrides): Express;
  /** An app (default: the main one) listening on loopback, for tests that need a real socket. */
  listen(app?: Express): Promise<{ url: string; server: Server }>;
  close(): Promise<void>;
};

let counter = 0;

export async function startAiHarness(
  envOverrides: Record<string, string> = {},
  /** Servers other than the shared test ones, e.g. the private Redis or Postgres a fault test stops. */
  storage: Partial<PrivateStorage['urls']> = {},
): Promise<AiHarness> {
  const openai = await startOpenAIFake();
  const elevenlabs = await startElevenLabsFake();
  const anthropic = await startAnthropicFake();
  const database = await createTestDatabase({
    migrationsDir: GATEWAY_MIGRATIONS_DIR,
    serverUrl: storage.databaseServerUrl,
  });
  const prisma = new PrismaClient({ adapter: database.adapter, log: [{ emit: 'event', level: 'query' }] });
  const prismaQueries: string[] = [];
  prisma.$on('query', (e) => prismaQueries.push(e.query));
  const kv = createTestKv({ url: storage.redisUrl });
  const logs = createMemoryDestination();
  const logger = createLogger({ service: 'gateway', destination: logs, level: 'debug' });
  const lanesFile = writeTempJson('lanes.json', TEST_LANES);
  const baseUrls = baseUrlsFor(openai.baseURL, elevenlabs.url, {}, anthropic.apiBase);

  const dataDir = mkdtempSync(path.join(tmpdir(), 'gw-data-'));
  const instances: GatewayInstance[] = [];
  const startInstance = (
    env: Record<string, string>,
    overrides: GatewayDepsOverrides = {},
  ): GatewayInstance => {
    const instance = startGatewayInstance(
      // Raw SQL on the test database's pool, as main.ts passes storage.db.
      { logger, prisma, sql: database.db, kv },
      {
        NODE_ENV: 'test',
        LOG_LEVEL: 'debug',
        GATEWAY_PUBLIC_URL: PUBLIC_URL,
        GATEWAY_SECRET: SECRET,
        AI_LANES_CONFIG: lanesFile,
        AI_PROVIDER_BASE_URLS: baseUrls,
        AI_UPSTREAM_TIMEOUT_MS: '5000',
        // Tests script failures per test; a real cooldown would carry them into the next test.
        AI_CIRCUIT_COOLDOWN_MS: '1',
        // The ledger's local spool (usage/ledger-spool.ts): one folder per harness.
        DATA_DIR: dataDir,
        PROVIDER_KEYS_MASTER_KEYS: newMasterKey('k1'),
        ...SERVER_KEYS,
        ...envOverrides,
        ...env,
      },
      overrides,
    );
    instances.push(instance);
    return instance;
  };
  const { app, deps } = startInstance({});
  const servers: LoopbackServer[] = [];
  let marks = { openai: 0, elevenlabs: 0, anthropic: 0 };

  return {
    app,
    deps,
    prisma,
    prismaQueries,
    sql: database.db,
    kv,
    openai,
    elevenlabs,
    anthropic,
    usage: {
      async flush() {
        for (const instance of instances) await instance.deps.ledger.flush();
      },
    },
    logs,
    resetFakes() {
      openai.reset();
      elevenlabs.reset();
      anthropic.reset();
      marks = {
        openai: openai.requests.length,
        elevenlabs: elevenlabs.requests.length,
        anthropic: anthropic.requests.length,
      };
    },
    openaiRequests: () => openai.requests.slice(marks.openai),
    anthropicRequests: () => anthropic.requests.slice(marks.anthropic),
    elevenlabsRequests: () => elevenlabs.requests.slice(marks.elevenlabs),
    waitForOpenaiRequest: (predicate = () => true) =>
      openai.waitForRequest((r) => r.seq > marks.openai && predicate(r)),
    waitForOpenaiAbort: (predicate = () => true) =>
      openai.waitForAbort((r) => r.seq > marks.openai && predicate(r)),
    async createCaller() {
      counter += 1;
      const user = await upsertUserByEmail(prisma, `ai-${process.pid}-${Date.now()}-${counter}@example.com`);
      const key = await createApiKey(deps, { userId: user.id, name: `k${counter}`, scope: 'ai' });
      const token = randomBytes(32).toString('base64url');
      const now = new Date();
      await insertSession(prisma, {
        userId: user.id,
        tokenHash: hashSessionToken(token),
        createdAt: now,
        expiresAt: new Date(now.getTime() + 3_600_000),
        userAgent: null,
      });
      return { userId: user.id, apiKey: key.key, apiKeyId: key.key_id, cookie: `gw_session=${token}` };
    },
    startInstance(env = {}, overrides = {}) {
      return startInstance(env, overrides).app;
    },
    async listen(target = app) {
      const listening = await listenLoopback(target);
      servers.push(listening);
      return { url: listening.url, server: listening.server };
    },
    async close() {
      for (const server of servers) await server.close();
      for (const instance of instances) await instance.close();
      await prisma.$disconnect();
      await database.drop();
      await kv.close();
      await openai.close();
      await elevenlabs.close();
      await anthropic.close();
    },
  };
}

/** What an AI test file works with; `caller` is new for every test. */
export type AiTestState = { h: AiHarness; caller: TestCaller; url: string };

/**
 * The hooks of an AI test file: one harness per file (served on loopback when
 * `listen`), fresh fakes and a new caller before each test, closed after the
 * last. `use` receives the state whenever it changes.
 */
export function useAiHarness(
  env: Record<string, string> | (() => Record<string, string>),
  use: (state: AiTestState) => void,
  opts: {
    listen?: boolean;
    /** Servers to run on instead of the defaults, read when the harness starts (e.g. a need's server). */
    storage?: () => Partial<PrivateStorage['urls']>;
  } = {},
): void {
  let state: AiTestState | undefined;
  beforeAll(async () => {
    const h = await startAiHarness(typeof env === 'function' ? env() : env, opts.storage?.());
    state = { h, url: opts.listen ? (await h.listen()).url : '', caller: undefined as unknown as TestCaller };
    use(state);
  });
  afterAll(async () => {
    await state?.h.close();
  });
  beforeEach(async () => {
    if (!state) throw new Error('the AI harness did not start');
    state.h.resetFakes();
    state = { ...state, caller: await state.h.createCaller() };
    use(state);
  });
}
