import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { waitUnlessClosed } from '../http-server';
import type { RecordedRequest } from './recorder';
import { type CommonBehaviour, reply } from './script';

/** Token counts reported in `usage`; missing numbers are estimated (4 characters per token). */
export type UsageNumbers = {
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
  /** `prompt_tokens_details.cached_tokens`: the part of the prompt read from the provider's cache. */
  cached_tokens?: number;
  /** `completion_tokens_details.reasoning_tokens`: the part of the completion spent reasoning. */
  reasoning_tokens?: number;
};

/** What the OpenAI fake does for one request. */
export type OpenAIBehaviour = CommonBehaviour & {
  /** Reply text (default "Hello from the OpenAI fake."). */
  content?: string;
  /** Exact content pieces for `stream: true`; defaults to `content` split into words. */
  chunks?: string[];
  /** Delay between streamed content chunks. */
  chunkDelayMs?: number;
  /**
   * Append ` @<µs>` to every streamed content piece: the machine's monotonic
   * clock (`process.hrtime`, shared by every process on the host) when the
   * piece is written, so a client on the same host can tell how long each
   * chunk spent in transit (bench `streams`).
   */
  stampChunks?: boolean;
  /** Destroy the socket after this many content chunks (the role chunk does not count). */
  failAfterChunks?: number;
  /** Keep the stream open but silent after this many content chunks (a stall), until the client leaves. */
  stallAfterChunks?: number;
  /** Wait this long after the role chunk before the first content chunk (a slow first token). */
  firstTokenDelayMs?: number;
  /** Write `count` unparseable events (default 1) before the content chunk at index `beforeChunk`. */
  garbled?: { beforeChunk: number; count?: number };
  /** End the stream (finish reason and usage included) without `data: [DONE]`. */
  omitDone?: boolean;
  usage?: UsageNumbers;
  /** `finish_reason` (default "stop"). */
  finishReason?: string;
  /** Model name to report instead of the requested one (providers often answer with a dated name). */
  model?: string;
  /**
   * A model that refuses an answer ending in the assistant's own message (a
   * prefill), as Anthropic's newest models do: such a request gets 400 with
   * code `prefill_rejected` and Anthropic's wording. Others are answered.
   */
  refusePrefill?: boolean;
  /**
   * A model asked to continue its cut answer by instruction (the conversation
   * ends with the partial answer as the assistant's message, then a user
   * message): when the partial answer starts the scripted one, it answers the
   * rest, first restating its last `restateChars` characters (as models often
   * do; 0 = none).
   */
  continuesByInstruction?: { restateChars: number };
  /**
   * Answer with these function calls instead of text (content null, finish
   * reason `tool_calls`); streamed as one name delta and one arguments delta each.
   */
  toolCalls?: Array<{ name: string; arguments: string }>;
};

function toolCallId(i: number): string {
  return `call_fake_${i}`;
}

export type ChatRequest = {
  model: string;
  messages: Array<{ role?: unknown; content?: unknown }>;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
};

const estimate = (text: string) => Math.max(1, Math.ceil(text.length / 4));

function buildUsage(request: ChatRequest, content: string, numbers: UsageNumbers = {}) {
  const promptText = request.messages.map((m) => (typeof m.content === 'string' ? m.content : '')).join('');
  const prompt = numbers.prompt_tokens ?? estimate(promptText);
  const completion = numbers.completion_tokens ?? estimate(content);
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: numbers.total_tokens ?? prompt + completion,
    prompt_tokens_details: { cached_tokens: numbers.cached_tokens ?? 0, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: numbers.reasoning_tokens ?? 0,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

function envelope(behaviour: OpenAIBehaviour, request: ChatRequest) {
  return {
    id: `chatcmpl-${randomBytes(12).toString('base64url')}`,
    created: Math.floor(Date.now() / 1000),
    model: behaviour.model ?? request.model,
    system_fingerprint: 'fp_fake',
    service_tier: 'default',
  };
}

export function replyChat(
  res: ServerResponse,
  record: RecordedRequest,
  request: ChatRequest,
  behaviour: OpenAIBehaviour,
  headers: Record<string, string>,
): void {
  const content = behaviour.content ?? behaviour.chunks?.join('') ?? 'Hello from the OpenAI fake.';
  const calls = behaviour.toolCalls;
  const message = calls
    ? {
        role: 'assistant',
        content: null,
        refusal: null,
        annotations: [],
        tool_calls: calls.map((c, i) => ({
          id: toolCallId(i),
          type: 'function',
          function: { name: c.name, arguments: c.arguments },
        })),
      }
    : { role: 'assistant', content, refusal: null, annotations: [] };
  const completion = {
    ...envelope(behaviour, request),
    object: 'chat.completion',
    choices: [
      {
        index: 0,
        message,
        logprobs: null,
        finish_reason: behaviour.finishReason ?? (calls ? 'tool_calls' : 'stop'),
      },
    ],
    usage: buildUsage(request, calls ? '' : content, behaviour.usage),
  };
  record.sent = JSON.stringify(completion);
  reply(res, record, 200, completion, headers);
}

/** Streams in OpenAI's SSE chunk format: role chunk, content deltas, finish chunk, optional usage chunk, [DONE]. */
export async function streamChat(
  res: ServerResponse,
  record: RecordedRequest,
  request: ChatRequest,
  behaviour: OpenAIBehaviour,
  headers: Record<string, string>,
): Promise<void> {
  const full = behaviour.content ?? behaviour.chunks?.join('') ?? 'Hello from the OpenAI fake.';
  // Prefill: a trailing assistant message is the answer so far; the fake goes on from there
  // when its scripted answer starts with it (as a model continuing its own text would).
  const last = request.messages[request.messages.length - 1];
  const prefill = last?.role === 'assistant' && typeof last.content === 'string' ? last.content : '';
  const resumed = resumePoint(request, full, behaviour);
  const continues = (prefill.length > 0 && full.startsWith(prefill)) || resumed !== null;
  const content = resumed !== null ? full.slice(resumed) : continues ? full.slice(prefill.length) : full;
  const pieces =
    behaviour.chunks && !continues ? behaviour.chunks : (content.match(/\S+\s*|\s+/g) ?? [content]);
  const includeUsage = request.stream_options?.include_usage === true;
  const base = { ...envelope(behaviour, request), object: 'chat.completion.chunk' };
  const usageField = includeUsage ? { usage: null } : {};
  record.sent = '';
  // Resolves once the bytes reached the socket, so a scripted destroy cannot swallow them.
  const send = (choices: unknown[], extra: object = usageField) =>
    new Promise<void>((resolve) => {
      const event = `data: ${JSON.stringify({ ...base, choices, ...extra })}\n\n`;
      record.sent += event;
      res.write(event, () => resolve());
    });
  const choice = (delta: object, finish: string | null = null) => ({
    index: 0,
    delta,
    logprobs: null,
    finish_reason: finish,
  });

  record.status = 200;
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    ...headers,
  });
  await send([choice({ role: 'assistant', content: '', refusal: null })]);
  if (behaviour.toolCalls) {
    for (const [i, call] of behaviour.toolCalls.entries()) {
      const head = {
        index: i,
        id: toolCallId(i),
        type: 'function',
        function: { name: call.name, arguments: '' },
      };
      await send([choice({ tool_calls: [head] })]);
      await send([choice({ tool_calls: [{ index: i, function: { arguments: call.arguments } }] })]);
    }
    await send([choice({}, behaviour.finishReason ?? 'tool_calls')]);
    if (includeUsage) await send([], { usage: buildUsage(request, '', behaviour.usage) });
    record.sent += 'data: [DONE]\n\n';
    res.end('data: [DONE]\n\n');
    return;
  }
  if (behaviour.firstTokenDelayMs && !(await waitUnlessClosed(res, behaviour.firstTokenDelayMs))) return;
  for (const [i, piece] of pieces.entries()) {
    if (behaviour.failAfterChunks !== undefined && i >= behaviour.failAfterChunks) break;
    if (behaviour.stallAfterChunks !== undefined && i >= behaviour.stallAfterChunks) {
      // Silent until the client gives up; the connection stays open.
      await waitUnlessClosed(res, 10 * 60_000);
      return;
    }
    if (i > 0 && behaviour.chunkDelayMs && !(await waitUnlessClosed(res, behaviour.chunkDelayMs))) return;
    if (res.destroyed) return;
    if (behaviour.garbled && behaviour.garbled.beforeChunk === i) {
      for (let g = 0; g < (behaviour.garbled.count ?? 1); g++) {
        await new Promise<void>((resolve) =>
          res.write('data: {"id":"chatcmpl-garbled","choi\n\n', () => resolve()),
        );
      }
    }
    const stamped = behaviour.stampChunks ? `${piece}@${process.hrtime.bigint() / 1000n} ` : piece;
    await send([choice({ content: stamped })]);
  }
  if (behaviour.failAfterChunks !== undefined) {
    record.destroyedByFake = true;
    res.destroy();
    return;
  }
  await send([choice({}, behaviour.finishReason ?? 'stop')]);
  if (includeUsage) await send([], { usage: buildUsage(request, pieces.join(''), behaviour.usage) });
  if (!behaviour.omitDone) record.sent += 'data: [DONE]\n\n';
  res.end(behaviour.omitDone ? undefined : 'data: [DONE]\n\n');
}

/** The message Anthropic's newest models answer a prefilled request with (400 invalid_request_error). */
export const PREFILL_REFUSAL_MESSAGE =
  'This model does not support assistant message prefill. The conversation must end with a user message.';

/** Whether the request ends in the assistant's message (a prefill). */
export function endsWithPrefill(request: ChatRequest): boolean {
  return request.messages[request.messages.length - 1]?.role === 'assistant';
}

/**
 * Where a continuation by instruction resumes the scripted answer: after the
 * partial answer (the message before the last), less `restateChars`; null
 * when the request is not such a continuation or the behaviour does not take it.
 */
function resumePoint(request: ChatRequest, full: string, behaviour: OpenAIBehaviour): number | null {
  if (!behaviour.continuesByInstruction) return null;
  const n = request.messages.length;
  const partial = request.messages[n - 2];
  if (n < 2 || request.messages[n - 1]?.role !== 'user' || partial?.role !== 'assistant') return null;
  if (typeof partial.content !== 'string' || !full.startsWith(partial.content)) return null;
  return Math.max(0, partial.content.length - behaviour.continuesByInstruction.restateChars);
}
