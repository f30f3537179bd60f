import type { ChatCompletionResponse, ChatUsage } from '@platform/contract';
import { tracingOn } from '@platform/service-kit';
import type { ChatCompletion } from 'openai/resources/chat/completions';
import { annotateChatResponse, captureChatContent } from '../observability/spans';
import { estimateChatPrompt, estimateTokens } from '../usage/estimate';
import type { PreparedChat } from './chat-request';
import type { Target } from './config/lanes';
import type { FallbackResult } from './fallback';
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

/** Prompt tokens served from (`read`) or written to (`write`) the provider's prompt cache. */
export type CacheTokens = { read: number; write: number };

/**
 * The cache counts of a chat usage object: `prompt_tokens_details.cached_tokens`
 * (OpenAI's name) and `cache_write_tokens` (OpenRouter's, also what the
 * Anthropic client reports). Null when the provider said nothing about caching.
 */
export function cacheTokensOf(usage: unknown): CacheTokens | null {
  const details = (usage as { prompt_tokens_details?: Record<string, unknown> } | null | undefined)
    ?.prompt_tokens_details;
  if (!details) return null;
  const count = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0);
  return { read: count(details.cached_tokens), write: count(details.cache_write_tokens) };
}

/**
 * The upstream body for one target: the request's field policy applied when
 * it has one (a passed-through body keeps its keys' order: `model` is
 * replaced in place); otherwise (native chat) only the token limit renamed
 * for a reasoning model, which refuses `max_tokens`.
 */
export function upstreamChatParams(prepared: PreparedChat, target: Target) {
  if (prepared.forTarget)
    return { ...prepared.forTarget(prepared.params, target).params, model: target.model };
  if (target.reasoning_model && prepared.params.max_tokens != null) {
    const { max_tokens, ...rest } = prepared.params;
    return { ...rest, max_completion_tokens: max_tokens, model: target.model };
  }
  return { ...prepared.params, model: target.model };
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
    lane: prepared.lane,
    storedKeys,
    clientSignal,
    attempt: async ({ target, credential, signal }) => {
      const params = upstreamChatParams(prepared, target);
      // A request under a field policy goes as the client sent it (no `stream` is not streaming).
      const body = prepared.forTarget ? params : { ...params, stream: false };
      const completion = await rt.providers.chat(credential).complete(body, signal, prepared.native);
      // On the attempt's span: the model, finish reasons and tokens the provider reported.
      if (tracingOn()) {
        annotateChatResponse(completion);
        captureChatContent(params.messages, completion.choices);
      }
      return completion;
    },
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

/**
 * What a completion is charged: the provider's usage (with its cached prompt
 * tokens), or, when it reported none, our estimate of prompt and answer.
 */
export function completionUsage(prepared: PreparedChat, result: FallbackResult<ChatCompletion>) {
  const reported = result.value.usage;
  // The answer's text as it already is (no copy), for the request log when its project captures content.
  const answer = result.value.choices[0]?.message.content ?? undefined;
  if (reported && (reported.total_tokens ?? 0) > 0) {
    return {
      target: result.target,
      answer,
      usage: { ...toChatUsage(reported), cached_tokens: reported.prompt_tokens_details?.cached_tokens ?? 0 },
      cache: cacheTokensOf(reported),
      estimated: false,
    };
  }
  const prompt = estimateChatPrompt(prepared);
  const written = result.value.choices
    .map(
      (c) =>
        `${c.message.content ?? ''}${(c.message.tool_calls ?? []).map((t) => JSON.stringify(t)).join('')}`,
    )
    .join('');
  const completion = estimateTokens(written);
  return {
    target: result.target,
    answer,
    usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
    estimated: true,
  };
}
