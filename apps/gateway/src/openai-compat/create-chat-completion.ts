import type { OpenAiChatCompletion } from '@platform/contract';
import type { ChatCompletion } from 'openai/resources/chat/completions';
import { toChatUsage } from '../ai/chat';

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
 * standard fields (no provider extras), usage as the three counts.
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
    usage: toChatUsage(completion.usage),
  };
}
