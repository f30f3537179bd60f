import type { AnthropicMessagesRequest } from '@platform/contract';
import type {
  ChatCompletionContentPart,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import type { UpstreamChatParams } from '../../ai/chat-request';

type Block = Record<string, unknown> & { type: string };

/**
 * A Messages request in the chat shape, and the names of what it carried
 * that the chat shape cannot (`x-gateway-dropped-params`, docs/gateway-ai.md#field-policy).
 */
export type ChatTranslation = { params: UpstreamChatParams; dropped: string[] };

/** Top-level fields the translation maps; any other present field is dropped and named. */
const MAPPED_FIELDS = new Set([
  'model',
  'max_tokens',
  'messages',
  'system',
  'stream',
  'stop_sequences',
  'temperature',
  'top_p',
  'tools',
  'tool_choice',
  'metadata',
  'output_config',
]);

/** Keys of a custom tool that map to a function tool; others (cache_control aside) are named when dropped. */
const TOOL_KEYS = new Set(['type', 'name', 'description', 'input_schema', 'strict', 'cache_control']);

/**
 * Names come from the client's own keys and block types: only header-safe ones
 * are named (x-gateway-dropped-params), and only so many.
 */
const SAFE_NAME = /^[A-Za-z0-9_.-]{1,64}$/;
const MAX_NAMES = 32;

/** Collects dropped names once each, in the order met. */
class Drops {
  readonly names = new Set<string>();
  add(name: string): void {
    if (this.names.size < MAX_NAMES && SAFE_NAME.test(name)) this.names.add(name);
  }
  /** `cache_control` anywhere has no chat equivalent (the provider caches on its own, if at all). */
  noteCacheControl(b: Record<string, unknown>): void {
    if (b.cache_control !== undefined) this.add('cache_control');
  }
}

function blocksOf(content: unknown): Block[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return Array.isArray(content) ? (content as Block[]) : [];
}

/** The text of a system prompt, system turn or tool result; other blocks are dropped by type. */
function plainText(content: unknown, where: string, drops: Drops): string {
  return blocksOf(content)
    .map((b) => {
      drops.noteCacheControl(b);
      if (b.type === 'text') return String(b.text ?? '');
      drops.add(`${where}.${b.type}`);
      return '';
    })
    .join('');
}

/** An Anthropic image block as a chat image part (base64 as a data URL), or null for other sources. */
function imagePart(b: Block): ChatCompletionContentPart | null {
  const source = b.source as { type?: string; media_type?: string; data?: string; url?: string } | undefined;
  if (source?.type === 'base64' && source.media_type && source.data)
    return { type: 'image_url', image_url: { url: `data:${source.media_type};base64,${source.data}` } };
  if (source?.type === 'url' && source.url) return { type: 'image_url', image_url: { url: source.url } };
  return null;
}

function userTurn(blocks: Block[], out: ChatCompletionMessageParam[], drops: Drops): void {
  const parts: ChatCompletionContentPart[] = [];
  for (const b of blocks) {
    drops.noteCacheControl(b);
    const image = b.type === 'image' ? imagePart(b) : null;
    if (b.type === 'text') parts.push({ type: 'text', text: String(b.text ?? '') });
    else if (image) parts.push(image);
    else if (b.type === 'tool_result') {
      const text = plainText(b.content, 'messages.content.tool_result', drops);
      out.push({
        role: 'tool',
        tool_call_id: String(b.tool_use_id),
        content: b.is_error === true ? `Error: ${text}` : text,
      });
    } else drops.add(`messages.content.${b.type}`);
  }
  if (parts.length > 0) out.push({ role: 'user', content: parts });
}

function assistantTurn(blocks: Block[], out: ChatCompletionMessageParam[], drops: Drops): void {
  let text = '';
  const calls: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }> = [];
  for (const b of blocks) {
    drops.noteCacheControl(b);
    if (b.type === 'text') text += String(b.text ?? '');
    else if (b.type === 'tool_use')
      calls.push({
        id: String(b.id),
        type: 'function',
        function: { name: String(b.name), arguments: JSON.stringify(b.input ?? {}) },
      });
    // Earlier thinking, server tool calls and their results have no place in the chat format.
    else drops.add(`messages.content.${b.type}`);
  }
  if (text === '' && calls.length === 0) return;
  out.push({
    role: 'assistant',
    content: text === '' && calls.length > 0 ? null : text,
    ...(calls.length > 0 ? { tool_calls: calls } : {}),
  });
}

function toolChoice(choice: AnthropicMessagesRequest['tool_choice']): UpstreamChatParams['tool_choice'] {
  if (!choice) return undefined;
  if (choice.type === 'any') return 'required';
  if (choice.type === 'none') return 'none';
  if (choice.type === 'tool' && choice.name) return { type: 'function', function: { name: choice.name } };
  return 'auto';
}

function chatTools(request: AnthropicMessagesRequest, drops: Drops) {
  const tools = [];
  for (const t of request.tools ?? []) {
    drops.noteCacheControl(t);
    // A server tool (web search, code execution, ...) runs at Anthropic; a chat provider has none.
    if (t.type !== undefined && t.type !== 'custom') {
      drops.add(`tools.${t.type}`);
      continue;
    }
    for (const key of Object.keys(t)) if (!TOOL_KEYS.has(key)) drops.add(`tools.${key}`);
    tools.push({
      type: 'function' as const,
      function: {
        name: t.name,
        ...(t.description ? { description: t.description } : {}),
        parameters: t.input_schema ?? { type: 'object', properties: {} },
        ...(typeof t.strict === 'boolean' ? { strict: t.strict } : {}),
      },
    });
  }
  return tools;
}

/** `output_config.format` (structured output) as `response_format`; `effort` has no chat equivalent every provider takes. */
function responseFormat(request: AnthropicMessagesRequest, drops: Drops) {
  const config = request.output_config as { format?: { type?: string; schema?: unknown } | null } | undefined;
  if (!config || typeof config !== 'object') return undefined;
  for (const key of Object.keys(config)) if (key !== 'format') drops.add(`output_config.${key}`);
  const format = config.format;
  if (!format) return undefined;
  if (format.type !== 'json_schema') {
    drops.add('output_config.format');
    return undefined;
  }
  return { type: 'json_schema' as const, json_schema: { name: 'output', schema: format.schema as object } };
}

/** The chat messages: `system` and every `role: "system"` turn folded into one leading system message. */
function chatMessages(request: AnthropicMessagesRequest, drops: Drops): ChatCompletionMessageParam[] {
  const system: string[] = [];
  const top = plainText(request.system, 'system', drops);
  if (top) system.push(top);
  const messages: ChatCompletionMessageParam[] = [];
  for (const m of request.messages) {
    const blocks = blocksOf(m.content);
    if (m.role === 'system') {
      const text = plainText(m.content, 'messages.content', drops);
      if (text) system.push(text);
    } else if (m.role === 'user') userTurn(blocks, messages, drops);
    else assistantTurn(blocks, messages, drops);
  }
  return system.length > 0 ? [{ role: 'system', content: system.join('\n\n') }, ...messages] : messages;
}

/**
 * An Anthropic Messages request in the chat shape, for OpenAI-compatible
 * targets (the table in docs/gateway-ai.md#field-policy). Nothing is refused:
 * what has no chat equivalent (`top_k`, `thinking`, `cache_control`, server
 * tools, documents, fields this gateway does not know) is left out and named
 * in `dropped`.
 */
export function toChatParams(request: AnthropicMessagesRequest): ChatTranslation {
  const drops = new Drops();
  for (const key of Object.keys(request)) if (!MAPPED_FIELDS.has(key)) drops.add(key);
  const messages = chatMessages(request, drops);
  const tools = chatTools(request, drops);
  const choice = toolChoice(request.tool_choice);
  // OpenAI refuses tool_choice without tools (all of them may have been server tools).
  if (request.tool_choice && tools.length === 0) drops.add('tool_choice');
  const metadata = request.metadata ?? {};
  for (const key of Object.keys(metadata)) if (key !== 'user_id') drops.add(`metadata.${key}`);
  const format = responseFormat(request, drops);
  const params: Record<string, unknown> = {
    messages,
    max_tokens: request.max_tokens,
    ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
    ...(request.top_p !== undefined ? { top_p: request.top_p } : {}),
    ...(request.stop_sequences?.length ? { stop: request.stop_sequences } : {}),
    ...(tools.length > 0 ? { tools } : {}),
    ...(choice && tools.length > 0 ? { tool_choice: choice } : {}),
    ...(tools.length > 0 && request.tool_choice?.disable_parallel_tool_use === true
      ? { parallel_tool_calls: false }
      : {}),
    ...(metadata.user_id ? { user: metadata.user_id } : {}),
    ...(format ? { response_format: format } : {}),
  };
  return { params: params as UpstreamChatParams, dropped: [...drops.names] };
}

/** The bytes the size rule counts: text, thinking, tool inputs and tool results; the system prompt apart. */
export function countedTexts(request: AnthropicMessagesRequest): {
  messageBytes: number;
  systemBytes: number;
} {
  const text = (content: unknown): string => {
    if (typeof content === 'string') return content;
    if (!Array.isArray(content)) return '';
    return content
      .map((b: Block) => {
        if (typeof b.text === 'string') return b.text;
        if (typeof b.thinking === 'string') return b.thinking;
        if (b.type === 'tool_use') return JSON.stringify(b.input ?? {});
        if (b.type === 'tool_result') return text(b.content);
        return '';
      })
      .join('');
  };
  return {
    messageBytes: request.messages.reduce((n, m) => n + Buffer.byteLength(text(m.content)), 0),
    systemBytes: Buffer.byteLength(text(request.system)),
  };
}
