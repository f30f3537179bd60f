import type { ChatCompletion, ChatCompletionChunk } from 'openai/resources/chat/completions';
import type { ResponsesUpstream } from './openai-responses';
import { SseChunkIterator } from './sse-parser';
import { readProviderError, UpstreamProtocolError } from './upstream-errors';
import { createUpstreamPool, readJson } from './upstream-pool';

/**
 * The chat hot path's client of an OpenAI-compatible provider: one undici
 * Pool (keep-alive connections, no per-origin limit) per provider and key,
 * handed out by the ProviderRegistry like the SDK clients.
 *
 * Why not the `openai` SDK here: a CPU profile of the gateway under load
 * (bench `peers`) showed the SDK plus the fetch/WHATWG-streams machinery
 * under it at about a fifth of the process's CPU per chat request (Headers,
 * Request, AbortSignal wrapping, web streams, SSE decoding through
 * TextDecoder and async generators). This client sends the same request
 * (POST {baseURL}/chat/completions, Bearer key, JSON body) over the pool and
 * maps failures to the errors the fallback already classifies: a non-2xx
 * answer is UpstreamHttpError (status + Retry-After), an unreadable body
 * UpstreamProtocolError, a socket problem undici's own errors (connection
 * errors). Timeouts and client disconnects stay the caller's AbortSignal,
 * which aborts the request and closes its socket. The SDK stays the client
 * for images and speech.
 */
export type ChatUpstream = {
  /** `native`: the client's own request, which a provider of that format gets as sent (others ignore it). */
  complete(params: object, signal: AbortSignal, native?: NativeRequest): Promise<ChatCompletion>;
  /**
   * Resolves once the provider answered 2xx; iterates the stream's chunks until `[DONE]`.
   * `onGarbled` is told of every unparseable event (one is skipped, two in a row fail the stream).
   */
  stream(
    params: object,
    signal: AbortSignal,
    onGarbled?: () => void,
    native?: NativeRequest,
  ): Promise<AsyncIterableIterator<ChatCompletionChunk>>;
  /**
   * Input tokens of a request in the provider's own format, by the provider's
   * count endpoint (Anthropic's `POST /messages/count_tokens`); only clients
   * of an API that has one implement it.
   */
  countTokens?(native: NativeRequest, model: string, signal: AbortSignal): Promise<number>;
  close(): Promise<void>;
};

/**
 * A request as the client sent it in a provider's own format (today
 * Anthropic's Messages), for a target of that provider: passed through with
 * only `model` replaced, so what the chat shape cannot say (cache_control,
 * thinking blocks) survives. `beta` is the client's `anthropic-beta` header.
 */
export type NativeRequest = {
  format: 'anthropic' | 'openai-responses';
  body: Record<string, unknown>;
  beta?: string;
};

/**
 * `responses`: the provider also serves OpenAI's Responses API; a request
 * that came in as Responses (`native`) goes there as sent, `model` set.
 */
export function createChatUpstream(
  baseUrl: string,
  apiKey: string,
  responses?: ResponsesUpstream,
): ChatUpstream {
  const pool = createUpstreamPool(baseUrl, 'chat/completions', readProviderError);
  const asResponses = (native: NativeRequest | undefined) =>
    responses && native?.format === 'openai-responses' ? responses : undefined;
  const headers = {
    authorization: `Bearer ${apiKey}`,
    'content-type': 'application/json',
    accept: 'application/json',
  };
  const streamHeaders = { ...headers, accept: 'text/event-stream' };

  return {
    async complete(params, signal, native) {
      const own = asResponses(native);
      if (own && native) return own.complete(passedThrough(native.body, params, false), signal);
      const value = await readJson(await pool.post(headers, params, signal), signal, 'unreadable completion');
      if (typeof value !== 'object' || value === null || !Array.isArray((value as ChatCompletion).choices))
        throw new UpstreamProtocolError('not a chat completion');
      return value as ChatCompletion;
    },
    async stream(params, signal, onGarbled, native) {
      const own = asResponses(native);
      if (own && native) return own.stream(passedThrough(native.body, params, true), signal);
      return new SseChunkIterator(await pool.post(streamHeaders, params, signal), onGarbled);
    },
    close: async () => {
      await Promise.all([pool.close(), responses?.close()]);
    },
  };
}

/** The client's own body with `model` (the target's) and `stream` set in place. */
function passedThrough(
  body: Record<string, unknown>,
  params: object,
  stream: boolean,
): Record<string, unknown> {
  const model = (params as { model?: unknown }).model;
  return { ...body, model, ...(stream || body.stream !== undefined ? { stream } : {}) };
}
