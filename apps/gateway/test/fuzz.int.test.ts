import {
  arbHeaderValue,
  arbPathSegment,
  arbWireBody,
  fuzzRunner,
  sendWireBody,
  type WireBody,
} from '@platform/testing';
import fc from 'fast-check';
import request from 'supertest';
import { type AiHarness, PUBLIC_URL, startAiHarness, type TestCaller } from './support/ai-harness';

/**
 * Property-based fuzzing of every gateway endpoint: generated and mutated
 * bodies, credentials, headers, query strings and path segments. Whatever the
 * input: never a 5xx, never a hang, and every error carries the contract
 * (`{error, request_id}`; OpenAI's error object under /v1). Seeded; FUZZ_RUNS
 * and FUZZ_SEED for long runs (docs/reliability.md).
 */
const { timeout, run, expectContract } = fuzzRunner(30);

type Auth = 'none' | 'key' | 'session' | 'bearer';
type Endpoint = {
  method: 'get' | 'post' | 'delete';
  /** `{seg}` is replaced by a generated path segment; `?` gets generated query parameters. */
  path: string;
  auth: Auth;
  body?: Record<string, unknown>;
  query?: string[];
  html?: boolean;
  openai?: boolean;
  /** The session or key is spent by the call (logout): a fresh caller per run. */
  consumesCaller?: boolean;
};

const chat = { lane: 'free', project_id: 'fuzz', messages: [{ role: 'user', content: 'hi' }] };
const ENDPOINTS: Endpoint[] = [
  { method: 'get', path: '/health', auth: 'none' },
  { method: 'get', path: '/health/ready', auth: 'none' },
  { method: 'get', path: '/openapi.json', auth: 'none' },
  { method: 'get', path: '/metrics', auth: 'none' },
  { method: 'get', path: '/api/v1/config', auth: 'none' },
  { method: 'get', path: '/api/v1/{seg}', auth: 'key' },
  {
    method: 'post',
    path: '/api/v1/auth/request-magic-link',
    auth: 'none',
    body: { email: 'fuzz@example.com' },
  },
  { method: 'post', path: '/api/v1/auth/verify-code', auth: 'none', body: { code: 'x'.repeat(43) } },
  { method: 'get', path: '/api/v1/auth/magic-link', auth: 'none', query: ['code', 'state'], html: true },
  { method: 'get', path: '/api/v1/auth/session', auth: 'session' },
  { method: 'post', path: '/api/v1/auth/logout', auth: 'session', consumesCaller: true },
  { method: 'get', path: '/api/v1/me', auth: 'key' },
  { method: 'get', path: '/api/v1/me', auth: 'session' },
  { method: 'post', path: '/api/v1/auth/api-keys', auth: 'session', body: { name: 'fuzz' } },
  { method: 'get', path: '/api/v1/auth/api-keys/list', auth: 'session' },
  {
    method: 'post',
    path: '/api/v1/auth/api-keys/revoke',
    auth: 'session',
    body: { key_id: '00000000-0000-4000-8000-000000000000' },
  },
  { method: 'post', path: '/api/v1/keys', auth: 'key', body: { provider: 'groq', key: 'gsk_fuzz_key_0001' } },
  { method: 'get', path: '/api/v1/keys', auth: 'key' },
  { method: 'delete', path: '/api/v1/keys/{seg}', auth: 'key' },
  { method: 'get', path: '/api/v1/usage', auth: 'key', query: ['from', 'to', 'project_id'] },
  { method: 'get', path: '/api/v1/usage/today', auth: 'key' },
  { method: 'post', path: '/api/v1/ai/chat/completions', auth: 'key', body: chat },
  { method: 'post', path: '/api/v1/ai/chat/stream', auth: 'key', body: chat },
  { method: 'post', path: '/api/v1/ai/image', auth: 'key', body: { project_id: 'fuzz', prompt: 'a cat' } },
  { method: 'post', path: '/api/v1/ai/tts', auth: 'key', body: { project_id: 'fuzz', text: 'hello' } },
  { method: 'post', path: '/api/v1/ai/music', auth: 'key', body: { project_id: 'fuzz', prompt: 'piano' } },
  { method: 'post', path: '/api/v1/ai/soundfx', auth: 'key', body: { project_id: 'fuzz', prompt: 'rain' } },
  {
    method: 'post',
    path: '/v1/chat/completions',
    auth: 'bearer',
    body: { model: 'free', messages: [{ role: 'user', content: 'hi' }] },
    openai: true,
  },
  {
    method: 'post',
    path: '/v1/chat/completions',
    auth: 'bearer',
    body: { model: 'free', stream: true, messages: [{ role: 'user', content: 'hi' }] },
    openai: true,
  },
  { method: 'get', path: '/v1/models', auth: 'bearer', openai: true },
  { method: 'get', path: '/v1/models/{seg}', auth: 'bearer', openai: true },
];

/** OpenAI's error object: `{error: {message, type, code, param}}`. */
const isOpenAiError = (body: unknown) =>
  typeof (body as { error?: { message?: unknown } } | null)?.error?.message === 'string';

let h: AiHarness;
let url: string;
let ip = 0;

beforeAll(async () => {
  h = await startAiHarness({
    AI_UPSTREAM_TIMEOUT_MS: '3000',
    AI_RATE_LIMIT_PER_MINUTE: '1000000',
    AI_DAILY_TOKEN_BUDGET: '1000000000',
  });
  ({ url } = await h.listen());
}, 120_000);
afterAll(() => h?.close());

/** Long runs (FUZZ_RUNS) would otherwise keep every log line and fake request in memory. */
function forgetRecordings(): void {
  if (h.logs.lines.length > 5000) h.logs.lines.length = 0;
  for (const log of [h.openai.requests, h.elevenlabs.requests] as unknown[][])
    if (log.length > 5000) log.length = 0;
}

type Input = {
  credential: 'valid' | 'missing' | string;
  body: WireBody;
  seg: string;
  query: [string, string][];
  origin: string | null;
  requestId: string | null;
};

function arbInput(endpoint: Endpoint): fc.Arbitrary<Input> {
  return fc.record({
    credential: fc.oneof(
      { weight: 6, arbitrary: fc.constant('valid') },
      { weight: 1, arbitrary: fc.constant('missing') },
      { weight: 2, arbitrary: arbHeaderValue },
    ),
    body: endpoint.body ? arbWireBody(endpoint.body) : fc.constant<WireBody>({ kind: 'none' }),
    seg: arbPathSegment,
    query: fc.array(fc.tuple(fc.constantFrom(...(endpoint.query ?? ['x'])), arbPathSegment), {
      maxLength: 3,
    }),
    origin: fc.option(fc.oneof(fc.constant(PUBLIC_URL), arbHeaderValue)),
    requestId: fc.option(arbHeaderValue),
  });
}

function buildRequest(endpoint: Endpoint, input: Input, caller: TestCaller): request.Test {
  let path = endpoint.path.replace('{seg}', input.seg);
  if (endpoint.query && input.query.length > 0)
    path += `?${input.query.map(([k, v]) => `${k}=${v}`).join('&')}`;
  ip += 1;
  let req = request(url)
    [endpoint.method](path)
    .set('X-Forwarded-For', `10.${(ip >> 16) & 255}.${(ip >> 8) & 255}.${ip & 255}`);
  if (input.origin !== null) req = req.set('Origin', input.origin);
  if (input.requestId !== null) req = req.set('X-Request-Id', input.requestId);
  if (input.credential !== 'missing') {
    const valid = input.credential === 'valid';
    if (endpoint.auth === 'key') req = req.set('x-api-key', valid ? caller.apiKey : input.credential);
    if (endpoint.auth === 'bearer')
      req = req.set('Authorization', `Bearer ${valid ? caller.apiKey : input.credential}`);
    if (endpoint.auth === 'session') {
      req = req.set('Cookie', valid ? caller.cookie : `gw_session=${input.credential}`);
      if (input.origin === null) req = req.set('Origin', PUBLIC_URL);
    }
  }
  return sendWireBody(req, input.body);
}

describe('fuzzing every gateway endpoint', () => {
  it.each(ENDPOINTS.map((e) => [`${e.method.toUpperCase()} ${e.path} (${e.auth})`, e] as const))(
    '%s: never 5xx, never a hang, always the error contract',
    async (_name, endpoint) => {
      let caller = await h.createCaller();
      await run(
        fc.asyncProperty(arbInput(endpoint), async (input) => {
          if (endpoint.consumesCaller) caller = await h.createCaller();
          forgetRecordings();
          await expectContract(buildRequest(endpoint, input, caller), {
            html: endpoint.html,
            errorShape: endpoint.openai ? isOpenAiError : undefined,
          });
        }),
      );
    },
    timeout,
  );
});
