import { AppError } from '@platform/errors';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import type { Target } from '../ai/config/lanes';
import type { StreamFormat } from '../ai/streaming/relay';
import { type CompletionIdentity, reasoningTokensOf, toOpenAiUsage } from './create-chat-completion';
import { toOpenAiErrorBody } from './errors';

/** OpenAI's stream terminator. */
export const DONE_SENTINEL = '[DONE]';

type Delta = ChatCompletionChunk['choices'][number]['delta'];

/** The standard delta fields only; provider extras (reasoning, vendor ids) are not passed on. */
function toDelta(delta: Delta | undefined) {
  if (!delta) return {};
  return {
    ...(delta.role ? { role: 'assistant' as const } : {}),
    ...(delta.content !== undefined ? { content: delta.content } : {}),
    ...(delta.refusal !== undefined ? { refusal: delta.refusal } : {}),
    ...(delta.tool_calls ? { tool_calls: delta.tool_calls } : {}),
  };
}

/**
 * `stream: true` of `POST /v1/chat/completions`. From a target that
 * `passThrough` says speaks OpenAI's protocol, every chunk as it sent it
 * (its id and extras) with only `model` set to `<lane>/<model>`, its usage
 * chunk only when the client asked for usage. Otherwise (a translated
 * target) every chunk as a `chat.completion.chunk` under our id and `<lane>/<model>`, then (with
 * `include_usage`) a usage chunk with empty `choices`, then `data: [DONE]`.
 * The upstream is always asked for usage (accounting needs it); its own usage
 * chunk is replaced by ours. A failure after the start ends the stream with
 * OpenAI's `data: {"error": ...}`, which the SDKs raise as an APIError.
 */
export function openAiStreamFormat(
  who: CompletionIdentity,
  includeUsage: boolean,
  passThrough: (target: Target) => boolean = () => false,
): StreamFormat {
  const head = (model: string) => ({
    id: who.id,
    object: 'chat.completion.chunk' as const,
    created: who.created,
    model: `${who.lane}/${model}`,
  });
  const usageField = includeUsage ? { usage: null } : {};
  let reasoning: number | undefined;
  let usageSent = false;
  return {
    chunk(sse, chunk, target) {
      if (chunk.usage) reasoning = reasoningTokensOf(chunk.usage) ?? reasoning;
      if (passThrough(target)) {
        const model = `${who.lane}/${target.model}`;
        if (includeUsage) {
          if (chunk.choices.length === 0) usageSent = true;
          return sse.sendData({ ...chunk, model });
        }
        // The upstream was asked for usage; a client that did not ask gets no trace of it.
        if (chunk.choices.length === 0) return undefined;
        const { usage: _usage, ...rest } = chunk;
        return sse.sendData({ ...rest, model });
      }
      if (chunk.choices.length === 0) return undefined;
      return sse.sendData({
        ...head(target.model),
        choices: chunk.choices.map((c) => ({
          index: c.index,
          delta: toDelta(c.delta),
          logprobs: null,
          finish_reason: c.finish_reason ?? null,
        })),
        ...usageField,
      });
    },
    async done(sse, end) {
      if (includeUsage && !usageSent) {
        const usage = toOpenAiUsage(end.usage, end.cache?.read, reasoning);
        await sse.sendData({ ...head(end.target.model), choices: [], usage });
      }
      await sse.sendData(DONE_SENTINEL);
    },
    async error(sse, code, cause) {
      const body = toOpenAiErrorBody(new AppError(code));
      // Why a broken stream could not be continued, after our public message (never provider text).
      if (cause) body.error.message = `${body.error.message}: ${cause}`;
      await sse.sendData(body);
    },
  };
}
