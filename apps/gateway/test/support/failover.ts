import type { AiHarness, TestCaller } from './ai-harness';
import { parseSse } from './sse';

/**
 * The fault-injection suite's wiring (issue 27): lanes whose first target is
 * the faulty one and whose second is healthy (and accepts prefill), lanes with
 * one target only (a clean error is all there is), and the four ways in: the
 * native stream and completion, and `/v1/chat/completions` streamed and not.
 */
export const FAILOVER_LANES = {
  // Lane-wide retry settings as shipped (one retry, Retry-After up to 5 s).
  retry: { max_retries: 1, backoff_ms: 50, retry_after_max_ms: 2_000 },
  lanes: {
    duo: {
      default_model: 'primary',
      first_token_timeout_ms: 600,
      stream_idle_timeout_ms: 600,
      targets: [
        { provider: 'openai', model: 'primary' },
        { provider: 'openai', model: 'backup', accepts_prefill: true },
      ],
    },
    solo: {
      default_model: 'only',
      first_token_timeout_ms: 600,
      stream_idle_timeout_ms: 600,
      targets: [{ provider: 'openai', model: 'only' }],
    },
    noprefill: {
      default_model: 'np-primary',
      stream_idle_timeout_ms: 600,
      targets: [
        { provider: 'openai', model: 'np-primary' },
        { provider: 'openai', model: 'np-backup', accepts_prefill: false },
      ],
    },
    dns: {
      default_model: 'dns-1',
      targets: [
        { provider: 'cerebras', model: 'dns-1' },
        { provider: 'openai', model: 'after-dns' },
      ],
    },
    tls: {
      default_model: 'tls-1',
      targets: [
        { provider: 'google', model: 'tls-1' },
        { provider: 'openai', model: 'after-tls' },
      ],
    },
    refused: {
      default_model: 'refused-1',
      targets: [
        { provider: 'groq', model: 'refused-1' },
        { provider: 'openai', model: 'after-refused' },
      ],
    },
    dnsonly: { default_model: 'dns-only', targets: [{ provider: 'cerebras', model: 'dns-only' }] },
    tlsonly: { default_model: 'tls-only', targets: [{ provider: 'google', model: 'tls-only' }] },
    refusedonly: { default_model: 'refused-only', targets: [{ provider: 'groq', model: 'refused-only' }] },
    again: {
      default_model: 'again-1',
      targets: [
        { provider: 'openrouter', model: 'again-1' },
        { provider: 'openai', model: 'after-again' },
      ],
    },
    againonly: { default_model: 'again-only', targets: [{ provider: 'openrouter', model: 'again-only' }] },
  },
  media: {
    image: [{ provider: 'openai', model: 'dall-e-3' }],
    tts: [{ provider: 'openai', model: 'tts-1' }],
    music: [{ provider: 'elevenlabs', model: 'music_v1' }],
    soundfx: [{ provider: 'elevenlabs', model: 'sfx_v2' }],
  },
};

export const FAILOVER_LANE_NAMES = Object.keys(FAILOVER_LANES.lanes).join(',');

/** A loopback port nothing listens on. */
export async function closedPort(): Promise<number> {
  // Port 9 (discard): below the range the OS hands out for listen(0), so no other test's
  // server can take it meanwhile, as one did with a port freed here (a bare run's 400).
  return 9;
}

/** What the caller got, whichever way it came in. */
export type Answer = {
  status: number;
  /** The answer's text (all chunks joined, or the completion's content). */
  text: string;
  /** True when the answer ended as a success (`done`, `[DONE]`, a 200 JSON completion). */
  complete: boolean;
  /** The error the caller saw (JSON body or the stream's last event), if any. */
  error: unknown;
  elapsedMs: number;
};

/** One way into the chat API. */
export type Via = {
  name: string;
  stream: boolean;
  send(url: string, caller: TestCaller, lane: string, content?: string): Promise<Answer>;
};

const messages = (content: string) => [{ role: 'user', content }];

async function post(url: string, headers: Record<string, string>, body: unknown) {
  const started = Date.now();
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(20_000),
  });
  const text = await res.text();
  return { res, text, elapsedMs: Date.now() - started };
}

function jsonAnswer(
  status: number,
  text: string,
  elapsedMs: number,
  content: (body: never) => string,
): Answer {
  const body = JSON.parse(text) as never;
  return status === 200
    ? { status, text: content(body), complete: true, error: null, elapsedMs }
    : { status, text: '', complete: false, error: body, elapsedMs };
}

export const NATIVE_STREAM: Via = {
  name: 'native stream',
  stream: true,
  async send(url, caller, lane, content = 'hi') {
    const { res, text, elapsedMs } = await post(
      `${url}/api/v1/ai/chat/stream`,
      { 'x-api-key': caller.apiKey },
      { lane, project_id: 'failover', messages: messages(content) },
    );
    if (!res.headers.get('content-type')?.startsWith('text/event-stream'))
      return jsonAnswer(res.status, text, elapsedMs, () => '');
    const { events } = parseSse(text);
    const chunks = events
      .filter((e) => e.event === 'chunk')
      .map((e) => (e.data as { content: string }).content);
    const last = events[events.length - 1];
    return {
      status: res.status,
      text: chunks.join(''),
      complete: last?.event === 'done',
      error: last?.event === 'error' ? last.data : null,
      elapsedMs,
    };
  },
};

export const NATIVE_COMPLETION: Via = {
  name: 'native completion',
  stream: false,
  async send(url, caller, lane, content = 'hi') {
    const { res, text, elapsedMs } = await post(
      `${url}/api/v1/ai/chat/completions`,
      { 'x-api-key': caller.apiKey },
      { lane, project_id: 'failover', messages: messages(content) },
    );
    return jsonAnswer(res.status, text, elapsedMs, (b: { content: string }) => b.content);
  },
};

export const OPENAI_STREAM: Via = {
  name: '/v1 stream',
  stream: true,
  async send(url, caller, lane, content = 'hi') {
    const { res, text, elapsedMs } = await post(
      `${url}/v1/chat/completions`,
      { authorization: `Bearer ${caller.apiKey}` },
      { model: lane, messages: messages(content), stream: true },
    );
    if (!res.headers.get('content-type')?.startsWith('text/event-stream'))
      return jsonAnswer(res.status, text, elapsedMs, () => '');
    let out = '';
    let complete = false;
    let error: unknown = null;
    for (const block of text.split('\n\n')) {
      const line = block.split('\n').find((l) => l.startsWith('data: '));
      if (!line) continue;
      const data = line.slice(6);
      if (data === '[DONE]') {
        complete = true;
        continue;
      }
      const parsed = JSON.parse(data) as {
        error?: unknown;
        choices?: Array<{ delta?: { content?: string; role?: string } }>;
      };
      if (parsed.error) error = parsed;
      for (const choice of parsed.choices ?? []) out += choice.delta?.content ?? '';
    }
    return { status: res.status, text: out, complete, error, elapsedMs };
  },
};

export const OPENAI_COMPLETION: Via = {
  name: '/v1 completion',
  stream: false,
  async send(url, caller, lane, content = 'hi') {
    const { res, text, elapsedMs } = await post(
      `${url}/v1/chat/completions`,
      { authorization: `Bearer ${caller.apiKey}` },
      { model: lane, messages: messages(content) },
    );
    return jsonAnswer(
      res.status,
      text,
      elapsedMs,
      (b: { choices: Array<{ message: { content: string } }> }) => b.choices[0]?.message.content ?? '',
    );
  },
};

export const EVERY_VIA = [NATIVE_STREAM, NATIVE_COMPLETION, OPENAI_STREAM, OPENAI_COMPLETION];
export const STREAM_VIAS = [NATIVE_STREAM, OPENAI_STREAM];

/** Models the OpenAI fake was asked for since the last reset, in order. */
export function modelsAsked(h: AiHarness): string[] {
  return h.openaiRequests().map((r) => (r.body as { model?: string }).model ?? '');
}
