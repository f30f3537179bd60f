import type { ChatCompletion, ChatCompletionChunk } from 'openai/resources/chat/completions';
import { Pool } from 'undici';
import { type SseBody, SseChunkIterator } from './sse-parser';
import { readProviderError, UpstreamHttpError, UpstreamProtocolError } from './upstream-errors';

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
  close(): Promise<void>;
};

/**
 * A request as the client sent it in a provider's own format (today
 * Anthropic's Messages), for a target of that provider: passed through with
 * only `model` replaced, so what the chat shape cannot say (cache_control,
 * thinking blocks) survives. `beta` is the client's `anthropic-beta` header.
 */
export type NativeRequest = { format: 'anthropic'; body: Record<string, unknown>; beta?: string };

/** Only a backstop: the fallback's timer (AI_UPSTREAM_TIMEOUT_MS) and the stream idle timer act first. */
const BACKSTOP_MS = 10 * 60_000;
/** Error bodies are read up to this size (then dropped) so the connection can be reused. */
const MAX_ERROR_BODY = 64 * 1024;
/** Only this much of an error body is kept for readProviderError; the rest is drained unread. */
const MAX_ERROR_TEXT = 16 * 1024;

type Body = AsyncIterable<Buffer> &
  SseBody & {
    text(): Promise<string>;
    json(): Promise<unknown>;
  };

async function drainError(
  status: number,
  headers: Record<string, string | string[] | undefined>,
  body: Body,
) {
  let size = 0;
  const kept: Buffer[] = [];
  let keptSize = 0;
  try {
    for await (const chunk of body) {
      size += chunk.length;
      if (keptSize < MAX_ERROR_TEXT) {
        kept.push(chunk);
        keptSize += chunk.length;
      }
      if (size > MAX_ERROR_BODY) {
        body.destroy();
        break;
      }
    }
  } catch {
    // The status is what matters; a broken error body is read as far as it came.
  }
  const retryAfter = headers['retry-after'];
  // Only 4xx bodies change the decision (context length, content policy); the text is never logged.
  const reading =
    status >= 400 && status < 500 && keptSize > 0
      ? readProviderError(Buffer.concat(kept).toString('utf8', 0, MAX_ERROR_TEXT))
      : null;
  return new UpstreamHttpError(status, typeof retryAfter === 'string' ? retryAfter : null, reading);
}

export function createChatUpstream(baseUrl: string, apiKey: string): ChatUpstream {
  const url = new URL(baseUrl);
  const path = `${url.pathname.replace(/\/+$/, '')}/chat/completions`;
  const pool = new Pool(url.origin, {
    connections: null,
    keepAliveTimeout: 30_000,
    headersTimeout: BACKSTOP_MS,
    bodyTimeout: BACKSTOP_MS,
  });
  const headers = {
    authorization: `Bearer ${apiKey}`,
    'content-type': 'application/json',
    accept: 'application/json',
  };
  const streamHeaders = { ...headers, accept: 'text/event-stream' };

  const send = async (params: object, signal: AbortSignal, stream: boolean) => {
    const res = await pool.request({
      path,
      method: 'POST',
      headers: stream ? streamHeaders : headers,
      body: JSON.stringify(params),
      signal,
    });
    const body = res.body as unknown as Body;
    if (res.statusCode < 200 || res.statusCode > 299)
      throw await drainError(res.statusCode, res.headers, body);
    return body;
  };

  return {
    async complete(params, signal) {
      const body = await send(params, signal, false);
      let value: unknown;
      try {
        value = await body.json();
      } catch (err) {
        if (signal.aborted) throw err;
        throw new UpstreamProtocolError('unreadable completion');
      }
      if (typeof value !== 'object' || value === null || !Array.isArray((value as ChatCompletion).choices))
        throw new UpstreamProtocolError('not a chat completion');
      return value as ChatCompletion;
    },
    async stream(params, signal, onGarbled) {
      return new SseChunkIterator(await send(params, signal, true), onGarbled);
    },
    close: () => pool.close(),
  };
}
