import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type LoopbackServer, listenLoopback, readBody, waitUnlessClosed } from '../http-server';
import { PREFILL_REFUSAL_MESSAGE } from '../openai-fake/chat';
import { scriptedFakeControls } from '../openai-fake/controls';
import { createRecorder, type RecordedRequest } from '../openai-fake/recorder';
import {
  applyCommonBehaviour,
  type CommonBehaviour,
  createScript,
  type Queued,
  type Responder,
  reply,
} from '../openai-fake/script';

/** Token counts as Anthropic reports them; `input_tokens` excludes cached tokens. */
export type AnthropicUsageNumbers = {
  input_tokens?: number;
  output_tokens?: number;
  cache_creation_input_tokens?: number;
  cache_read_input_tokens?: number;
};

/** What the Anthropic fake does for one request. */
export type AnthropicBehaviour = CommonBehaviour & {
  /** Reply text (default "Hello from the Anthropic fake."). */
  content?: string;
  /** Exact text pieces for `stream: true`; defaults to `content` split into words. */
  chunks?: string[];
  /** A thinking block (with a signature) before the text, as extended thinking answers. */
  thinking?: string;
  /** Silence after the thinking block's first delta (a model thinking at length). */
  thinkingPauseMs?: number;
  /** Answer with these tool calls (stop reason `tool_use`); streamed as `input_json_delta` pieces. */
  toolCalls?: Array<{ name: string; input: Record<string, unknown> }>;
  usage?: AnthropicUsageNumbers;
  /** The answer of `POST /v1/messages/count_tokens` (default: an estimate, 4 characters a token). */
  inputTokens?: number;
  /** `stop_reason` (default `end_turn`, or `tool_use` with tool calls). */
  stopReason?: string;
  /** Destroy the socket after this many text deltas. */
  failAfterChunks?: number;
  /** Send an `error` event (overloaded_error) after this many text deltas, as Anthropic does mid-stream. */
  errorEventAfterChunks?: number;
  /**
   * A model that refuses a request ending in the assistant's message (a
   * prefill), as Anthropic's newest do: 400 invalid_request_error with their
   * wording. Requests ending in a user message are answered.
   */
  refusePrefill?: boolean;
  chunkDelayMs?: number;
};

/** An Anthropic Messages API on loopback: `POST /v1/messages`, plain and streamed, and `POST /v1/messages/count_tokens`. */
export type AnthropicFake = LoopbackServer & {
  /** The value for the Anthropic SDK's `baseURL` (the SDK adds `/v1/messages`). */
  baseURL: string;
  /** The base URL for the gateway's provider config (`.../v1`, like the public API's). */
  apiBase: string;
  requests: RecordedRequest[];
  set(behaviour: AnthropicBehaviour): void;
  setFor(model: string, behaviour: AnthropicBehaviour): void;
  enqueue(...behaviours: Queued<AnthropicBehaviour>[]): void;
  reset(): void;
  /** Decides each request's behaviour from its body (see Responder). */
  respond(responder: Responder<AnthropicBehaviour> | undefined): void;
  waitForRequest(predicate?: (r: RecordedRequest) => boolean, timeoutMs?: number): Promise<RecordedRequest>;
  waitForAbort(predicate?: (r: RecordedRequest) => boolean, timeoutMs?: number): Promise<RecordedRequest>;
};

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};

/** Anthropic's error envelope: `{ type: "error", error: { type, message } }`. */
export function anthropicErrorBody(status: number, override: CommonBehaviour['error'] = {}) {
  return {
    type: 'error',
    error: {
      type: override.type ?? ERROR_TYPES[status] ?? 'api_error',
      message: override.message ?? `Upstream error ${status}.`,
    },
  };
}

/** Versions the fake accepts in `anthropic-version`, as the real API refuses unknown ones. */
const VERSIONS = new Set(['2023-06-01', '2023-01-01']);

type MessagesRequest = {
  model: string;
  messages: unknown[];
  max_tokens?: number;
  stream?: boolean;
  system?: unknown;
};

const estimate = (text: string) => Math.max(1, Math.ceil(text.length / 4));

function usageOf(request: MessagesRequest, output: string, numbers: AnthropicUsageNumbers = {}) {
  return {
    input_tokens: numbers.input_tokens ?? estimate(JSON.stringify(request.messages)),
    output_tokens: numbers.output_tokens ?? estimate(output),
    cache_creation_input_tokens: numbers.cache_creation_input_tokens ?? 0,
    cache_read_input_tokens: numbers.cache_read_input_tokens ?? 0,
    service_tier: 'standard',
  };
}

function toolId(i: number): string {
  return `toolu_fake_${i}`;
}

function contentOf(behaviour: AnthropicBehaviour, text: string) {
  const blocks: unknown[] = [];
  if (behaviour.thinking !== undefined)
    blocks.push({ type: 'thinking', thinking: behaviour.thinking, signature: 'sig_fake' });
  if (behaviour.toolCalls) {
    behaviour.toolCalls.forEach((c, i) => {
      blocks.push({ type: 'tool_use', id: toolId(i), name: c.name, input: c.input });
    });
  } else {
    blocks.push({ type: 'text', text });
  }
  return blocks;
}

function messageHead(request: MessagesRequest) {
  return {
    id: `msg_fake_${randomBytes(9).toString('base64url')}`,
    type: 'message',
    role: 'assistant',
    model: request.model,
    stop_sequence: null,
  };
}

function replyMessage(
  res: ServerResponse,
  record: RecordedRequest,
  request: MessagesRequest,
  behaviour: AnthropicBehaviour,
): void {
  const text = behaviour.content ?? behaviour.chunks?.join('') ?? 'Hello from the Anthropic fake.';
  const message = {
    ...messageHead(request),
    content: contentOf(behaviour, text),
    stop_reason: behaviour.stopReason ?? (behaviour.toolCalls ? 'tool_use' : 'end_turn'),
    usage: usageOf(request, behaviour.toolCalls ? '' : text, behaviour.usage),
  };
  record.sent = JSON.stringify(message);
  reply(res, record, 200, message);
}

/** `POST /v1/messages/count_tokens`: `inputTokens`, else 4 characters a token over messages, system and tools. */
function replyCount(
  res: ServerResponse,
  record: RecordedRequest,
  request: MessagesRequest & { tools?: unknown },
  behaviour: AnthropicBehaviour,
): void {
  const text = JSON.stringify([request.system ?? '', request.messages, request.tools ?? []]);
  const answer = { input_tokens: behaviour.inputTokens ?? estimate(text) };
  record.sent = JSON.stringify(answer);
  reply(res, record, 200, answer);
}

/** The SSE sequence of the Messages API: message_start, ping, blocks, message_delta, message_stop. */
async function streamMessage(
  res: ServerResponse,
  record: RecordedRequest,
  request: MessagesRequest,
  behaviour: AnthropicBehaviour,
): Promise<void> {
  const text = behaviour.content ?? 'Hello from the Anthropic fake.';
  const pieces = behaviour.chunks ?? text.match(/\S+\s*|\s+/g) ?? [text];
  const usage = usageOf(request, behaviour.toolCalls ? '' : pieces.join(''), behaviour.usage);
  record.sent = '';
  const send = (type: string, data: object) =>
    new Promise<void>((resolve) => {
      const event = `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
      record.sent += event;
      res.write(event, () => resolve());
    });
  record.status = 200;
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  await send('message_start', {
    message: {
      ...messageHead(request),
      content: [],
      stop_reason: null,
      usage: { ...usage, output_tokens: 1 },
    },
  });
  await send('ping', {});
  let index = 0;
  if (behaviour.thinking !== undefined) {
    await send('content_block_start', {
      index,
      content_block: { type: 'thinking', thinking: '', signature: '' },
    });
    await send('content_block_delta', {
      index,
      delta: { type: 'thinking_delta', thinking: behaviour.thinking },
    });
    if (behaviour.thinkingPauseMs && !(await waitUnlessClosed(res, behaviour.thinkingPauseMs))) return;
    await send('content_block_delta', { index, delta: { type: 'signature_delta', signature: 'sig_fake' } });
    await send('content_block_stop', { index });
    index += 1;
  }
  if (behaviour.toolCalls) {
    for (const [i, call] of behaviour.toolCalls.entries()) {
      await send('content_block_start', {
        index,
        content_block: { type: 'tool_use', id: toolId(i), name: call.name, input: {} },
      });
      const json = JSON.stringify(call.input);
      // Two pieces, split inside the JSON, as the real API sends partial JSON.
      const cut = Math.floor(json.length / 2);
      for (const partial_json of [json.slice(0, cut), json.slice(cut)]) {
        await send('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json } });
      }
      await send('content_block_stop', { index });
      index += 1;
    }
  } else {
    await send('content_block_start', { index, content_block: { type: 'text', text: '' } });
    for (const [i, piece] of pieces.entries()) {
      if (behaviour.errorEventAfterChunks !== undefined && i >= behaviour.errorEventAfterChunks) {
        await send('error', { error: { type: 'overloaded_error', message: 'Overloaded' } });
        res.end();
        return;
      }
      if (behaviour.failAfterChunks !== undefined && i >= behaviour.failAfterChunks) {
        record.destroyedByFake = true;
        res.destroy();
        return;
      }
      if (i > 0 && behaviour.chunkDelayMs && !(await waitUnlessClosed(res, behaviour.chunkDelayMs))) return;
      if (res.destroyed) return;
      await send('content_block_delta', { index, delta: { type: 'text_delta', text: piece } });
    }
    await send('content_block_stop', { index });
  }
  await send('message_delta', {
    delta: {
      stop_reason: behaviour.stopReason ?? (behaviour.toolCalls ? 'tool_use' : 'end_turn'),
      stop_sequence: null,
    },
    usage: { output_tokens: usage.output_tokens },
  });
  await send('message_stop', {});
  res.end();
}

/**
 * Starts the fake on 127.0.0.1: `POST /v1/messages` with `x-api-key` (or
 * `Authorization: Bearer`) and `anthropic-version`, answering in Anthropic's
 * message and event formats, errors in its error envelope.
 */
export async function startAnthropicFake(
  opts: { apiKeys?: string[]; behaviour?: AnthropicBehaviour } = {},
): Promise<AnthropicFake> {
  const recorder = createRecorder();
  const script = createScript<AnthropicBehaviour>(opts.behaviour ?? {});

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const raw = await readBody(req);
    let body: MessagesRequest | undefined;
    try {
      body = raw.length > 0 ? (JSON.parse(raw.toString('utf8')) as MessagesRequest) : undefined;
    } catch {
      body = undefined;
    }
    const model = typeof body?.model === 'string' ? body.model : undefined;
    const record = recorder.start(req, res, body, model);
    record.rawBody = raw.toString('utf8');
    const fail = (status: number, message: string) =>
      reply(res, record, status, anthropicErrorBody(status, { message }));

    const key = record.headers['x-api-key'] ?? /^Bearer (.+)$/.exec(record.headers.authorization ?? '')?.[1];
    if (!key) return fail(401, 'x-api-key header is required');
    if (opts.apiKeys && !opts.apiKeys.includes(key)) return fail(401, 'invalid x-api-key');
    const counting = record.path === '/v1/messages/count_tokens';
    if (req.method !== 'POST' || (record.path !== '/v1/messages' && !counting)) return fail(404, 'Not found');
    const version = record.headers['anthropic-version'];
    if (!version) return fail(400, 'anthropic-version: header is required');
    if (!VERSIONS.has(version)) return fail(400, `anthropic-version: invalid version ${version}`);
    if (!body) return fail(400, 'There was an error parsing the body of your request');
    if (!model) return fail(400, 'model: Field required');
    if (typeof body.max_tokens !== 'number' && !counting) return fail(400, 'max_tokens: Field required');
    if (!Array.isArray(body.messages)) return fail(400, 'messages: Field required');

    const behaviour = script.resolve(model, body as Record<string, unknown>);
    if (await applyCommonBehaviour(behaviour, res, record, anthropicErrorBody)) return;
    const last = body.messages[body.messages.length - 1] as { role?: unknown } | undefined;
    if (behaviour.refusePrefill && !counting && last?.role === 'assistant')
      return fail(400, PREFILL_REFUSAL_MESSAGE);
    if (counting) return replyCount(res, record, body, behaviour);
    if (body.stream === true) return streamMessage(res, record, body, behaviour);
    return replyMessage(res, record, body, behaviour);
  };

  const server = await listenLoopback(handle);
  return {
    ...scriptedFakeControls(server, recorder, script),
    baseURL: server.url,
    apiBase: `${server.url}/v1`,
  };
}
