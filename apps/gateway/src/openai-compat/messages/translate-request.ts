import type { AnthropicMessagesRequest } from '@platform/contract';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { UpstreamChatParams } from '../../ai/chat-request';

type Block = Record<string, unknown> & { type: string };

/** Why a request cannot go to an OpenAI-compatible target: the field at fault and a sentence for the caller. */
export type Untranslatable = { param: string; message: string };

class CannotTranslate extends Error {
  constructor(
    readonly param: string,
    message: string,
  ) {
    super(message);
  }
}

function blocksOf(content: string | Block[]): Block[] {
  return typeof content === 'string' ? [{ type: 'text', text: content }] : content;
}

/** The text of a tool result or system prompt: a string or text blocks. */
function plainText(content: unknown, param: string): string {
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw new CannotTranslate(param, `${param}: unexpected content`);
  return content
    .map((b: Block, i) => {
      if (b.type !== 'text') {
        throw new CannotTranslate(
          `${param}.${i}`,
          `${b.type} content is only supported by Anthropic targets; this lane's targets are OpenAI-compatible.`,
        );
      }
      return String(b.text ?? '');
    })
    .join('');
}

function userTurn(blocks: Block[], index: number, out: ChatCompletionMessageParam[]): void {
  const texts: Array<{ type: 'text'; text: string }> = [];
  blocks.forEach((b, i) => {
    const param = `messages.${index}.content.${i}`;
    if (b.type === 'text') texts.push({ type: 'text', text: String(b.text ?? '') });
    else if (b.type === 'tool_result') {
      const text = plainText(b.content, `${param}.content`);
      out.push({
        role: 'tool',
        tool_call_id: String(b.tool_use_id),
        content: b.is_error === true ? `Error: ${text}` : text,
      });
    } else {
      throw new CannotTranslate(
        param,
        `${b.type} content is only supported by Anthropic targets; this lane's targets are OpenAI-compatible.`,
      );
    }
  });
  if (texts.length > 0) out.push({ role: 'user', content: texts });
}

function assistantTurn(blocks: Block[], index: number, out: ChatCompletionMessageParam[]): void {
  let text = '';
  const calls: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }> = [];
  blocks.forEach((b, i) => {
    if (b.type === 'text') text += String(b.text ?? '');
    else if (b.type === 'tool_use')
      calls.push({
        id: String(b.id),
        type: 'function',
        function: { name: String(b.name), arguments: JSON.stringify(b.input ?? {}) },
      });
    // Earlier thinking has no place in the chat format; the model does without it.
    else if (b.type !== 'thinking' && b.type !== 'redacted_thinking') {
      throw new CannotTranslate(
        `messages.${index}.content.${i}`,
        `${b.type} content is only supported by Anthropic targets; this lane's targets are OpenAI-compatible.`,
      );
    }
  });
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

/**
 * An Anthropic Messages request in the chat shape, for OpenAI-compatible
 * targets: `system` becomes a system message, `tool_result` blocks `tool`
 * messages, `tool_use` blocks tool calls, custom tools function tools.
 * `cache_control`, `thinking` (the setting and earlier thinking blocks) and
 * `metadata` other than `user_id` have no chat equivalent and are left out.
 * Images, documents, server tools and `top_k` cannot be carried: the
 * result names the field instead.
 */
export function toChatParams(
  request: AnthropicMessagesRequest,
): { params: UpstreamChatParams } | { untranslatable: Untranslatable } {
  try {
    if (request.top_k !== undefined)
      throw new CannotTranslate('top_k', 'top_k is only supported by Anthropic targets.');
    const messages: ChatCompletionMessageParam[] = [];
    const system = plainText(request.system, 'system');
    if (system) messages.push({ role: 'system', content: system });
    request.messages.forEach((m, i) => {
      const blocks = blocksOf(m.content as string | Block[]);
      if (m.role === 'user') userTurn(blocks, i, messages);
      else assistantTurn(blocks, i, messages);
    });
    const tools = request.tools?.map((t, i) => {
      if (t.type !== undefined && t.type !== 'custom') {
        throw new CannotTranslate(
          `tools.${i}`,
          `Server tool ${t.type} is only supported by Anthropic targets; this lane's targets are OpenAI-compatible.`,
        );
      }
      return {
        type: 'function' as const,
        function: {
          name: t.name,
          ...(t.description ? { description: t.description } : {}),
          parameters: t.input_schema ?? { type: 'object', properties: {} },
        },
      };
    });
    const choice = toolChoice(request.tool_choice);
    const userId = request.metadata?.user_id;
    const params: Record<string, unknown> = {
      messages,
      max_tokens: request.max_tokens,
      ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
      ...(request.top_p !== undefined ? { top_p: request.top_p } : {}),
      ...(request.stop_sequences?.length ? { stop: request.stop_sequences } : {}),
      ...(tools && tools.length > 0 ? { tools } : {}),
      ...(choice && tools && tools.length > 0 ? { tool_choice: choice } : {}),
      ...(userId ? { user: userId } : {}),
    };
    return { params: params as UpstreamChatParams };
  } catch (err) {
    if (err instanceof CannotTranslate) return { untranslatable: { param: err.param, message: err.message } };
    throw err;
  }
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
