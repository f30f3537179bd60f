import type { ChatCompletionResponse, ChatUsage } from '@platform/contract';
import type { ChatCompletion } from 'openai/resources/chat/completions';
import type { PreparedChat } from './chat-request';
import type { FallbackResult } from './fallback';
import type { Target } from './lanes';
import { runTargets } from './run-targets';
import type { AiRuntime, StoredKeys } from './runtime';

/** Usage as the provider reported it; zeros when it reported none. */
export function toChatUsage(
  usage: { prompt_tokens?: number; completion_tokens?: number; total_tokens?: number } | null | undefined,
): ChatUsage {
  const prompt = usage?.prompt_tokens ?? 0;
  const completion = usage?.completion_tokens ?? 0;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: usage?.total_tokens ?? prompt + completion,
  };
}

/** The upstream body for one target, without `stream`. */
export function upstreamChatParams(prepared: PreparedChat, target: Target) {
  return { model: target.model, ...prepared.params };
}

/** A non-streamed completion through the lane's targets, with fallback; the provider's answer as is. */
export function runChatCompletion(
  rt: AiRuntime,
  prepared: PreparedChat,
  storedKeys: StoredKeys,
  clientSignal: AbortSignal,
): Promise<FallbackResult<ChatCompletion>> {
  return runTargets(rt, {
    endpoint: 'chat',
    targets: prepared.targets,
    storedKeys,
    clientSignal,
    attempt: ({ target, credential, signal }) =>
      rt.providers
        .chat(credential)
        .complete({ ...upstreamChatParams(prepared, target), stream: false }, signal),
  });
}

/** The answer of runChatCompletion in the native response shape. */
export function toChatCompletionResponse(result: FallbackResult<ChatCompletion>): ChatCompletionResponse {
  const completion = result.value;
  const choice = completion.choices[0];
  return {
    content: choice?.message.content ?? '',
    // The configured id of the target that answered, not the provider's
    // dated alias, so clients can send it back as `model`.
    model_used: result.target.model,
    finish_reason: choice?.finish_reason ?? 'stop',
    usage: toChatUsage(completion.usage),
  };
}
