import type { OpenAiChatCompletion } from '@platform/contract';
import type { ChatCompletion, ChatCompletionChunk } from 'openai/resources/chat/completions';
import { toChatUsage } from '../ai/chat';

type ReportedUsage = ChatCompletion['usage'] | ChatCompletionChunk['usage'];

/** Reasoning tokens as the provider reported them; undefined when it did not. */
export function reasoningTokensOf(usage: ReportedUsage): number | undefined {
  const n = usage?.completion_tokens_details?.reasoning_tokens;
  return typeof n === 'number' ? n : undefined;
}

/**
 * Usage in OpenAI's shape: the three counts, plus
 * `prompt_tokens_details.cached_tokens` and
 * `completion_tokens_details.reasoning_tokens` when the provider reported them.
 */
export function toOpenAiUsage(
  counts: OpenAiChatCompletion['usage'],
  cached: number | undefined,
  reasoning: number | undefined,
): OpenAiChatCompletion['usage'] {
  return {
    ...counts,
    ...(cached !== undefined ? { prompt_tokens_details: { cached_tokens: cached } } : {}),
    ...(reasoning !== undefined ? { completion_tokens_details: { reasoning_tokens: reasoning } } : {}),
  };
}

/** What names this answer: our id (from the request id), its time, and `<lane>/<model>` of the target. */
export type CompletionIdentity = { id: string; created: number; lane: string };

/** The `id` of a completion and its chunks; derived from the request id, so logs and answers match. */
export function completionId(requestId: string): string {
  return `chatcmpl-${requestId}`;
}

type ToolCall = NonNullable<ChatCompletion['choices'][number]['message']['tool_calls']>[number];

function functionCalls(calls: readonly ToolCall[] | undefined) {
  const out = (calls ?? []).flatMap((c) =>
    c.type === 'function'
      ? [
          {
            id: c.id,
            type: 'function' as const,
            function: { name: c.function.name, arguments: c.function.arguments },
          },
        ]
      : [],
  );
  return out.length > 0 ? { tool_calls: out } : {};
}

/**
 * The provider's completion in OpenAI's format under our name: our id, the
 * model as `<lane>/<model>` (a value the client can send back), only the
 * standard fields (no provider extras), usage with the provider's cache and
 * reasoning counts.
 */
export function toOpenAiCompletion(
  completion: ChatCompletion,
  target: { model: string },
  who: CompletionIdentity,
): OpenAiChatCompletion {
  return {
    id: who.id,
    object: 'chat.completion',
    created: who.created,
    model: `${who.lane}/${target.model}`,
    choices: completion.choices.map((c) => ({
      index: c.index,
      message: {
        role: 'assistant',
        content: c.message.content ?? null,
        refusal: c.message.refusal ?? null,
        ...functionCalls(c.message.tool_calls),
      },
      logprobs: null,
      finish_reason: c.finish_reason ?? 'stop',
    })),
    usage: toOpenAiUsage(
      toChatUsage(completion.usage),
      completion.usage?.prompt_tokens_details?.cached_tokens,
      reasoningTokensOf(completion.usage),
    ),
  };
}

/**
 * Same-protocol passthrough: an OpenAI-protocol target's completion as it
 * sent it (its id, extras, usage details), only `model` replaced by
 * `<lane>/<model>` (a shallow copy, so `model` keeps its place).
 */
export function passThroughCompletion(
  completion: ChatCompletion,
  target: { model: string },
  who: CompletionIdentity,
): ChatCompletion {
  return { ...completion, model: `${who.lane}/${target.model}` };
}
