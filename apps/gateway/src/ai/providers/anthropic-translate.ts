import type { AnthropicMessageResponse } from '@platform/contract';
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';

/**
 * The chat shape (OpenAI's, which the relay and accounting speak) to and from
 * Anthropic's Messages API, for an Anthropic target reached through
 * `/v1/chat/completions`, `/v1/responses` or the native chat API. Requests
 * that came in as Anthropic messages skip this and go as sent (anthropic.ts).
 */

/** Chat parameters toAnthropicRequest carries over; any other is left out (and named, see anthropicDroppedParams). */
const ANTHROPIC_MAPPED_PARAMS: ReadonlySet<string> = new Set([
  'model',
  'messages',
  'max_tokens',
  'max_completion_tokens',
  'temperature',
  'top_p',
  'stop',
  'user',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'stream',
  'stream_options',
]);

/**
 * The chat parameters (set, not null) a translation to Anthropic leaves out:
 * those without an equivalent (`seed`, `response_format`, `logprobs`, ...),
 * and `tools.<type>` for tools other than functions.
 */
export function anthropicDroppedParams(params: object): string[] {
  const dropped: string[] = [];
  for (const [key, value] of Object.entries(params)) {
    if (value != null && !ANTHROPIC_MAPPED_PARAMS.has(key)) dropped.push(key);
  }
  const tools = (params as { tools?: unknown }).tools;
  if (Array.isArray(tools)) {
    for (const type of new Set(tools.map((t: { type?: unknown }) => String(t?.type)))) {
      if (type !== 'function') dropped.push(`tools.${type}`);
    }
  }
  return dropped;
}

/** Anthropic requires `max_tokens`; this is used when the chat request set none. */
export const DEFAULT_ANTHROPIC_MAX_TOKENS = 4096;

type Block = Record<string, unknown> & { type: string };
type AnthropicRequestMessage = { role: 'user' | 'assistant'; content: Block[] };

/** A raw Anthropic stream event, as parsed from its SSE `data:`. */
export type AnthropicEvent = { type: string } & Record<string, unknown>;

/** A chat chunk that came from an Anthropic event; `anthropic` is the event itself, for passthrough. */
export type AnthropicChunk = ChatCompletionChunk & { anthropic: AnthropicEvent };
/** A chat completion that came from an Anthropic message; `anthropic` is the message itself. */
export type AnthropicCompletion = ChatCompletion & { anthropic: AnthropicMessageResponse };

type ChatParams = {
  model: string;
  messages: ChatCompletionMessageParam[];
  max_tokens?: number | null;
  max_completion_tokens?: number | null;
  temperature?: number | null;
  top_p?: number | null;
  stop?: string | string[] | null;
  user?: string;
  tools?: Array<{ type: string; function?: { name: string; description?: string; parameters?: unknown } }>;
  tool_choice?: unknown;
  parallel_tool_calls?: boolean | null;
  stream?: boolean;
};

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((p) => (typeof p?.text === 'string' ? p.text : '')).join('');
}

function parseArguments(args: string): unknown {
  try {
    const value = JSON.parse(args) as unknown;
    return typeof value === 'object' && value !== null ? value : {};
  } catch {
    return {};
  }
}

/** Appends to the last message when it has the same role: Anthropic wants user and assistant to alternate. */
function push(out: AnthropicRequestMessage[], role: 'user' | 'assistant', blocks: Block[]): void {
  if (blocks.length === 0) return;
  const last = out.at(-1);
  if (last?.role === role) last.content.push(...blocks);
  else out.push({ role, content: blocks });
}

/** The tool choice; `parallel_tool_calls: false` is Anthropic's `disable_parallel_tool_use`. */
function toolChoiceOf(choice: unknown, parallel: boolean | null | undefined): Block | undefined {
  const block = toolChoice(choice);
  if (parallel !== false || block?.type === 'none') return block;
  return { ...(block ?? { type: 'auto' }), disable_parallel_tool_use: true };
}

function toolChoice(choice: unknown): Block | undefined {
  if (choice === 'auto') return { type: 'auto' };
  if (choice === 'none') return { type: 'none' };
  if (choice === 'required') return { type: 'any' };
  const name = (choice as { function?: { name?: unknown } } | null)?.function?.name;
  return typeof name === 'string' ? { type: 'tool', name } : undefined;
}

/**
 * An OpenAI chat request as an Anthropic Messages request: system and
 * developer messages become `system`, tool calls `tool_use` blocks, tool
 * answers `tool_result` blocks in a user turn; `stop` becomes
 * `stop_sequences`, `user` `metadata.user_id`, `required` tool choice `any`,
 * `parallel_tool_calls: false` `disable_parallel_tool_use`, and a temperature above Anthropic's maximum of 1 is sent as 1.
 */
export function toAnthropicRequest(params: ChatParams): Record<string, unknown> {
  const system: string[] = [];
  const messages: AnthropicRequestMessage[] = [];
  for (const m of params.messages) {
    if (m.role === 'system' || m.role === 'developer') system.push(textOf(m.content));
    else if (m.role === 'user') push(messages, 'user', [{ type: 'text', text: textOf(m.content) }]);
    else if (m.role === 'tool')
      push(messages, 'user', [
        { type: 'tool_result', tool_use_id: m.tool_call_id, content: textOf(m.content) },
      ]);
    else if (m.role === 'assistant') {
      const text = textOf(m.content);
      const blocks: Block[] = text ? [{ type: 'text', text }] : [];
      for (const call of m.tool_calls ?? []) {
        if (call.type !== 'function') continue;
        blocks.push({
          type: 'tool_use',
          id: call.id,
          name: call.function.name,
          input: parseArguments(call.function.arguments),
        });
      }
      push(messages, 'assistant', blocks);
    }
  }
  const stop = params.stop ?? undefined;
  const tools = params.tools
    ?.filter((t) => t.type === 'function' && t.function)
    .map((t) => ({
      name: t.function?.name,
      ...(t.function?.description ? { description: t.function.description } : {}),
      input_schema: t.function?.parameters ?? { type: 'object', properties: {} },
    }));
  const choice = toolChoiceOf(params.tool_choice, params.parallel_tool_calls);
  return {
    model: params.model,
    max_tokens: params.max_tokens ?? params.max_completion_tokens ?? DEFAULT_ANTHROPIC_MAX_TOKENS,
    messages,
    ...(system.length > 0 ? { system: system.join('\n\n') } : {}),
    // Anthropic's range is 0..1; the chat formats allow up to 2.
    ...(params.temperature != null ? { temperature: Math.min(params.temperature, 1) } : {}),
    ...(params.top_p != null ? { top_p: params.top_p } : {}),
    ...(stop !== undefined ? { stop_sequences: typeof stop === 'string' ? [stop] : stop } : {}),
    ...(params.user ? { metadata: { user_id: params.user } } : {}),
    ...(tools && tools.length > 0 ? { tools } : {}),
    ...(choice && tools && tools.length > 0 ? { tool_choice: choice } : {}),
  };
}

/** Anthropic's stop reason as a chat finish reason. */
export function toFinishReason(stopReason: unknown): ChatCompletion['choices'][number]['finish_reason'] {
  switch (stopReason) {
    case 'max_tokens':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    default:
      return 'stop';
  }
}

type AnthropicUsageLike = {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
};

/**
 * Anthropic usage as chat usage. Anthropic's `input_tokens` leaves out cache
 * reads and writes; chat usage counts every prompt token in `prompt_tokens`
 * (as OpenAI does) and names the cached part in `prompt_tokens_details`:
 * `cached_tokens` (OpenAI's name) for reads, `cache_write_tokens`
 * (OpenRouter's name) for writes.
 */
export function toChatUsageFromAnthropic(usage: AnthropicUsageLike) {
  const read = usage.cache_read_input_tokens ?? 0;
  const write = usage.cache_creation_input_tokens ?? 0;
  const prompt = (usage.input_tokens ?? 0) + read + write;
  const completion = usage.output_tokens ?? 0;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: read, cache_write_tokens: write },
  };
}

/** An Anthropic message as a chat completion (thinking blocks have no place there and are left out). */
export function toChatCompletion(message: AnthropicMessageResponse): AnthropicCompletion {
  const blocks = message.content as Block[];
  const text = blocks
    .filter((b) => b.type === 'text')
    .map((b) => String(b.text ?? ''))
    .join('');
  const calls = blocks
    .filter((b) => b.type === 'tool_use')
    .map((b) => ({
      id: String(b.id),
      type: 'function' as const,
      function: { name: String(b.name), arguments: JSON.stringify(b.input ?? {}) },
    }));
  return {
    id: message.id,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: message.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: calls.length > 0 && text === '' ? null : text,
          refusal: null,
          ...(calls.length > 0 ? { tool_calls: calls } : {}),
        },
        logprobs: null,
        finish_reason: toFinishReason(message.stop_reason),
      },
    ],
    usage: toChatUsageFromAnthropic(message.usage) as ChatCompletion['usage'],
    anthropic: message,
  };
}

/**
 * Turns Anthropic stream events into chat chunks, one chunk per event so a
 * passthrough writer sees every event (ping, block stops, thinking) in order;
 * events with no chat meaning carry empty `choices`.
 */
export function createEventTranslator() {
  let id = '';
  let model = '';
  let usage: AnthropicUsageLike = {};
  /** Anthropic block index -> chat tool call index. */
  const toolIndex = new Map<number, number>();
  const chunk = (
    event: AnthropicEvent,
    delta: Record<string, unknown> | null,
    extra: Partial<ChatCompletionChunk> = {},
  ): AnthropicChunk =>
    ({
      id,
      object: 'chat.completion.chunk',
      created: Math.floor(Date.now() / 1000),
      model,
      choices: delta ? [{ index: 0, delta, logprobs: null, finish_reason: null }] : [],
      ...extra,
      anthropic: event,
    }) as AnthropicChunk;

  return (event: AnthropicEvent): AnthropicChunk => {
    switch (event.type) {
      case 'message_start': {
        const message = event.message as { id?: string; model?: string; usage?: AnthropicUsageLike };
        id = message.id ?? '';
        model = message.model ?? '';
        usage = { ...message.usage };
        return chunk(event, { role: 'assistant', content: '' });
      }
      case 'content_block_start': {
        const block = event.content_block as Block;
        if (block.type !== 'tool_use') return chunk(event, null);
        const index = toolIndex.size;
        toolIndex.set(Number(event.index), index);
        return chunk(event, {
          tool_calls: [
            { index, id: block.id, type: 'function', function: { name: block.name, arguments: '' } },
          ],
        });
      }
      case 'content_block_delta': {
        const delta = event.delta as Block;
        if (delta.type === 'text_delta') return chunk(event, { content: delta.text });
        // Thinking has no place in the chat formats, but marks the stream as started (relay.ts).
        if (delta.type === 'thinking_delta') return chunk(event, { reasoning: delta.thinking });
        const index = toolIndex.get(Number(event.index));
        if (delta.type === 'input_json_delta' && index !== undefined)
          return chunk(event, { tool_calls: [{ index, function: { arguments: delta.partial_json } }] });
        return chunk(event, null);
      }
      case 'message_delta': {
        const delta = event.delta as { stop_reason?: unknown };
        // message_delta's counts are cumulative totals; present ones replace message_start's.
        const counts = (event.usage ?? {}) as AnthropicUsageLike;
        for (const [k, v] of Object.entries(counts)) if (v != null) (usage as Record<string, unknown>)[k] = v;
        const out = chunk(
          event,
          {},
          { usage: toChatUsageFromAnthropic(usage) as ChatCompletionChunk['usage'] },
        );
        const choice = out.choices[0];
        if (choice) choice.finish_reason = toFinishReason(delta.stop_reason);
        return out;
      }
      default:
        return chunk(event, null);
    }
  };
}
