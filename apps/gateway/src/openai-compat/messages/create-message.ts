import type { AnthropicMessageResponse, AnthropicUsage, ChatUsage } from '@platform/contract';
import type { ChatCompletion } from 'openai/resources/chat/completions';
import { type CacheTokens, cacheTokensOf, toChatUsage } from '../../ai/chat';

/** What names a translated answer: our id (from the request id) and the lane. */
export type MessageIdentity = { id: string; lane: string };

export function messageId(requestId: string): string {
  return `msg_${requestId}`;
}

/** A chat finish reason as Anthropic's stop reason. */
export function toStopReason(finishReason: string | null | undefined): string {
  switch (finishReason) {
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
    case 'function_call':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    default:
      return 'end_turn';
  }
}

/** Chat usage as Anthropic's: `input_tokens` without the cached part, which is counted beside it. */
export function toAnthropicUsage(usage: ChatUsage, cache: CacheTokens | null): AnthropicUsage {
  const read = cache?.read ?? 0;
  const write = cache?.write ?? 0;
  return {
    input_tokens: Math.max(0, usage.prompt_tokens - read - write),
    output_tokens: usage.completion_tokens,
    cache_creation_input_tokens: write,
    cache_read_input_tokens: read,
  };
}

function parseInput(args: string): unknown {
  try {
    const value = JSON.parse(args) as unknown;
    return typeof value === 'object' && value !== null ? value : {};
  } catch {
    return {};
  }
}

/** An OpenAI-compatible provider's completion as an Anthropic message, under our id and `<lane>/<model>`. */
export function toAnthropicMessage(
  completion: ChatCompletion,
  target: { model: string },
  who: MessageIdentity,
): AnthropicMessageResponse {
  const choice = completion.choices[0];
  const content: Array<Record<string, unknown> & { type: string }> = [];
  if (choice?.message.content) content.push({ type: 'text', text: choice.message.content });
  for (const call of choice?.message.tool_calls ?? []) {
    if (call.type !== 'function') continue;
    content.push({
      type: 'tool_use',
      id: call.id,
      name: call.function.name,
      input: parseInput(call.function.arguments),
    });
  }
  return {
    id: who.id,
    type: 'message',
    role: 'assistant',
    model: `${who.lane}/${target.model}`,
    content,
    stop_reason: toStopReason(choice?.finish_reason),
    stop_sequence: null,
    usage: toAnthropicUsage(toChatUsage(completion.usage), cacheTokensOf(completion.usage)),
  };
}

/**
 * `POST /v1/messages` without `stream`: an Anthropic target's message as it
 * came (passthrough), any other target's completion translated.
 */
export function toMessagesAnswer(
  completion: ChatCompletion,
  target: { model: string },
  who: MessageIdentity,
): AnthropicMessageResponse {
  const original = (completion as ChatCompletion & { anthropic?: AnthropicMessageResponse }).anthropic;
  return original ?? toAnthropicMessage(completion, target, who);
}
