import type { LoadSpec } from './load/types';
import { type GatewayTarget, STREAM_CHUNKS } from './targets/gateway';
import type { PaymentTarget } from './targets/payment';

/** The running services a scenario can use. */
export type Targets = { gateway?: GatewayTarget; payment?: PaymentTarget };
export type ServiceName = keyof Targets;

/** The request a scenario sends, repeated by autocannon. */
export type RequestSpec = Pick<
  LoadSpec,
  'url' | 'method' | 'headers' | 'body' | 'randomApiKeyPrefix' | 'randomClientAddress'
>;

/** A side effect counted around the run, e.g. upstream calls per response. */
export type SideEffect = {
  name: string;
  count(t: Targets): number;
  /** Calls expected per response (0 = none at all). */
  perResponse: 0 | 1;
};

export type Scenario = {
  name: string;
  service: ServiceName;
  summary: string;
  /** Reference scenarios measure a fake, not our code; they run only when named. */
  reference?: boolean;
  expectStatus: number;
  request(t: Targets): RequestSpec;
  /** Checks one full response before the load; returns what is wrong, or null. */
  check(body: string, headers: Headers, t: Targets): string | null;
  sideEffect?: SideEffect;
};

const SMALL_MESSAGES = [{ role: 'user', content: 'Say hello to the benchmark.' }];
/** 16 messages of 64,000 bytes: ~1 MB, under the 64 KiB per-message and 8 MiB total rules. */
const BIG_MESSAGES = Array.from({ length: 16 }, (_, i) => ({
  role: 'user',
  content: `message ${i} `.padEnd(64_000, 'lorem ipsum dolor sit amet '),
}));
const chatBody = (messages: unknown[]) => JSON.stringify({ lane: 'free', project_id: 'bench', messages });
/** Has the shape of a real key (gw_ + 43 base62 characters) but was never issued. */
const UNKNOWN_KEY = `gw_${'Bench'.padEnd(43, '0')}`;

const need = <K extends ServiceName>(t: Targets, name: K): NonNullable<Targets[K]> => {
  const target = t[name];
  if (!target) throw new Error(`${name} is not running`);
  return target as NonNullable<Targets[K]>;
};
const gw = (t: Targets) => need(t, 'gateway');
const pay = (t: Targets) => need(t, 'payment');

function parseJson(body: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(body);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

const expectFields =
  (expected: (t: Targets) => Record<string, unknown>) =>
  (body: string, _headers: Headers, t: Targets): string | null => {
    const json = parseJson(body);
    if (!json) return `not JSON: ${body.slice(0, 200)}`;
    for (const [field, value] of Object.entries(expected(t))) {
      if (json[field] !== value)
        return `${field} is ${JSON.stringify(json[field])}, expected ${JSON.stringify(value)}`;
    }
    return null;
  };

const chatRequest =
  (path: string, messages: unknown[]) =>
  (t: Targets): RequestSpec => ({
    url: `${gw(t).url}${path}`,
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': gw(t).apiKey },
    body: chatBody(messages),
  });

const chatAnswer = expectFields(() => ({ content: STREAM_CHUNKS.join(''), model_used: 'free-a' }));
const oneUpstreamCall: SideEffect = {
  name: 'upstream calls',
  count: (t) => gw(t).upstreamCalls(),
  perResponse: 1,
};
const noUpstreamCall: SideEffect = { ...oneUpstreamCall, perResponse: 0 };

const fakeChat =
  (messages: unknown[]) =>
  (t: Targets): RequestSpec => ({
    url: `${gw(t).openai.baseURL}/chat/completions`,
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-bench-groq-0002' },
    body: JSON.stringify({ model: 'free-a', messages, max_tokens: 4096 }),
  });
const fakeAnswer = (body: string) =>
  parseJson(body)?.object === 'chat.completion' ? null : `not a chat completion: ${body.slice(0, 200)}`;

export const SCENARIOS: Scenario[] = [
  {
    name: 'gateway-health',
    service: 'gateway',
    summary:
      'GET /health on the gateway: the middleware stack (request id, metrics, access log, helmet, CORS) and nothing else; the floor.',
    expectStatus: 200,
    request: (t) => ({ url: `${gw(t).url}/health`, method: 'GET', headers: {} }),
    check: expectFields(() => ({ status: 'ok', service: 'gateway' })),
  },
  {
    name: 'payment-health',
    service: 'payment',
    summary: 'GET /health on the payment service; the floor.',
    expectStatus: 200,
    request: (t) => ({ url: `${pay(t).url}/health`, method: 'GET', headers: {} }),
    check: expectFields(() => ({ status: 'ok', service: 'payment' })),
  },
  {
    name: 'chat',
    service: 'gateway',
    summary:
      'POST /api/v1/ai/chat/completions, valid key, small body, zero-latency OpenAI fake: key check, rate limit and budget, validation, one upstream call, usage accounting.',
    expectStatus: 200,
    request: chatRequest('/api/v1/ai/chat/completions', SMALL_MESSAGES),
    check: chatAnswer,
    sideEffect: oneUpstreamCall,
  },
  {
    name: 'chat-stream',
    service: 'gateway',
    summary: `POST /api/v1/ai/chat/stream: the same path as chat, answered as server-sent events (${STREAM_CHUNKS.length} chunks and done).`,
    expectStatus: 200,
    request: chatRequest('/api/v1/ai/chat/stream', SMALL_MESSAGES),
    check: (body, headers) => {
      if (!headers.get('content-type')?.startsWith('text/event-stream'))
        return `content-type ${headers.get('content-type')}`;
      const chunks = body.split('event: chunk').length - 1;
      if (chunks !== STREAM_CHUNKS.length || !body.includes('event: done'))
        return `stream body: ${body.slice(0, 300)}`;
      return null;
    },
    sideEffect: oneUpstreamCall,
  },
  {
    name: 'chat-1mb',
    service: 'gateway',
    summary:
      'chat/completions with 16 messages of 64,000 bytes (~1 MB): body parsing and validation cost, plus forwarding 1 MB upstream.',
    expectStatus: 200,
    request: chatRequest('/api/v1/ai/chat/completions', BIG_MESSAGES),
    check: chatAnswer,
    sideEffect: oneUpstreamCall,
  },
  {
    name: 'chat-bad-key',
    service: 'gateway',
    summary:
      'chat/completions with one unknown key, repeated -> 401 invalid api key: the auth path only (the negative lookup is cached, so no database read per request).',
    expectStatus: 401,
    request: (t) => ({
      ...chatRequest('/api/v1/ai/chat/completions', SMALL_MESSAGES)(t),
      headers: { 'content-type': 'application/json', 'x-api-key': UNKNOWN_KEY },
      randomClientAddress: true,
    }),
    check: expectFields(() => ({ error: 'invalid api key' })),
    sideEffect: noUpstreamCall,
  },
  {
    name: 'chat-bad-key-random',
    service: 'gateway',
    summary:
      'chat/completions with a new random well-formed key on every request -> 401: the uncached auth path (one database lookup per request), e.g. a key-guessing client.',
    expectStatus: 401,
    request: (t) => ({
      ...chatRequest('/api/v1/ai/chat/completions', SMALL_MESSAGES)(t),
      headers: { 'content-type': 'application/json', 'x-api-key': UNKNOWN_KEY },
      randomApiKeyPrefix: 'gw_',
      randomClientAddress: true,
    }),
    check: expectFields(() => ({ error: 'invalid api key' })),
    sideEffect: noUpstreamCall,
  },
  {
    name: 'subscription-status',
    service: 'payment',
    summary:
      'GET /api/v1/subscriptions/{user}/{product} for an active subscription with a fresh stored snapshot: API key, rate limit, database read; no Stripe call.',
    expectStatus: 200,
    request: (t) => ({
      url: `${pay(t).url}/api/v1/subscriptions/${pay(t).userId}/${pay(t).productId}`,
      method: 'GET',
      headers: { 'x-api-key': pay(t).apiKey },
    }),
    check: expectFields((t) => ({
      status: 'active',
      subscription_id: pay(t).subscriptionId,
      product_id: pay(t).productId,
    })),
    sideEffect: { name: 'Stripe calls', count: (t) => pay(t).stripeCalls(), perResponse: 0 },
  },
  {
    name: 'chat-without-usage-rows',
    service: 'gateway',
    reference: true,
    summary:
      'Reference: `chat` against a second app whose usage-row writer drops rows (no usage_records inserts); the difference to `chat` is the cost of usage recording.',
    expectStatus: 200,
    request: (t) => ({
      ...chatRequest('/api/v1/ai/chat/completions', SMALL_MESSAGES)(t),
      url: `${gw(t).urlWithoutUsageRows}/api/v1/ai/chat/completions`,
    }),
    check: chatAnswer,
    sideEffect: oneUpstreamCall,
  },
  {
    name: 'openai-fake-chat',
    service: 'gateway',
    reference: true,
    summary:
      'Reference: the OpenAI fake alone (same process as the gateway), small chat body; the part of `chat` that is not the gateway.',
    expectStatus: 200,
    request: fakeChat(SMALL_MESSAGES),
    check: fakeAnswer,
  },
  {
    name: 'openai-fake-chat-1mb',
    service: 'gateway',
    reference: true,
    summary:
      'Reference: the OpenAI fake alone with the ~1 MB body; the part of `chat-1mb` that is not the gateway.',
    expectStatus: 200,
    request: fakeChat(BIG_MESSAGES),
    check: fakeAnswer,
  },
];
