import type { AnthropicMessageResponse } from '@platform/contract';
import {
  type AnthropicChunk,
  type AnthropicEvent,
  createEventTranslator,
  toAnthropicRequest,
  toChatCompletion,
} from './anthropic-translate';
import type { ChatUpstream, NativeRequest } from './openai-chat';
import { SseDataLines } from './sse-parser';
import { readProviderError, UpstreamProtocolError } from './upstream-errors';
import { createUpstreamPool, readJson, type UpstreamBody } from './upstream-pool';

/**
 * The API version this client speaks (`anthropic-version`). The event and
 * message shapes in anthropic-translate.ts are those of this version.
 */
export const ANTHROPIC_VERSION = '2023-06-01';

/**
 * Anthropic's server-sent events: `event:` and `data:` lines; the JSON of
 * `data` carries its own `type`, which is what is read. An `error` event
 * (overloaded mid-stream) fails the stream like a broken connection.
 */
async function* readEvents(body: UpstreamBody): AsyncGenerator<AnthropicEvent> {
  body.setEncoding('utf8');
  // Strings from here on: the encoding is set.
  const pieces = body as AsyncIterable<unknown> as AsyncIterable<string>;
  const lines = new SseDataLines();
  try {
    for await (const piece of pieces) {
      lines.push(piece);
      for (let data = lines.next(); data !== null; data = lines.next()) {
        let event: AnthropicEvent;
        try {
          event = JSON.parse(data) as AnthropicEvent;
        } catch {
          throw new UpstreamProtocolError('unreadable stream event');
        }
        if (typeof event?.type !== 'string') throw new UpstreamProtocolError('stream event without a type');
        if (event.type === 'error') throw new UpstreamProtocolError('error event in stream');
        yield event;
        // Done: not waiting for the body's end keeps a server that holds the
        // connection open from turning a finished answer into an idle timeout
        // (the socket is closed rather than reused; a stream is long anyway).
        if (event.type === 'message_stop') return;
      }
    }
  } finally {
    // Stopped early (error, abort, or the caller gave up): the connection is not reused.
    body.destroy();
  }
}

function isMessage(value: unknown): value is AnthropicMessageResponse {
  const v = value as AnthropicMessageResponse | null;
  return typeof v === 'object' && v !== null && v.type === 'message' && Array.isArray(v.content);
}

/**
 * The client's own body with `model` set to the target's in its place (a
 * spread keeps key order), so what goes upstream is the client's bytes but for
 * `model`; `stream` is only touched if the client's differs from how the
 * gateway reads the answer.
 */
export function passedThrough(body: Record<string, unknown>, model: string, stream: boolean) {
  const out: Record<string, unknown> = { ...body, model };
  if ((out.stream === true) !== stream) out.stream = stream;
  return out;
}

/**
 * The chat client of Anthropic's Messages API (`POST {baseUrl}/messages`,
 * `x-api-key`, `anthropic-version`), behind the same face as the
 * OpenAI-compatible client so lanes, fallback, breaker, deadline and
 * accounting treat it alike. A request that came in as Anthropic messages
 * (`native`) goes as sent, only `model` set to the target's; any other is
 * translated from the chat shape. Answers come back in the chat shape with
 * the Anthropic original attached (`anthropic`), so /v1/messages can pass
 * them on untouched.
 */
export function createAnthropicUpstream(baseUrl: string, apiKey: string): ChatUpstream {
  const pool = createUpstreamPool(baseUrl, 'messages', readProviderError);
  const countPool = createUpstreamPool(baseUrl, 'messages/count_tokens');
  const headersFor = (native: NativeRequest | undefined, accept: string) => ({
    'x-api-key': apiKey,
    'anthropic-version': ANTHROPIC_VERSION,
    ...(native?.beta ? { 'anthropic-beta': native.beta } : {}),
    'content-type': 'application/json',
    accept,
  });

  const send = async (params: object, signal: AbortSignal, stream: boolean, request?: NativeRequest) => {
    // Only a request in Anthropic's own format goes as sent; any other is translated.
    const native = request?.format === 'anthropic' ? request : undefined;
    const chat = params as Parameters<typeof toAnthropicRequest>[0];
    const body = native
      ? passedThrough(native.body, chat.model, stream)
      : { ...toAnthropicRequest(chat), ...(stream ? { stream: true } : {}) };
    return pool.post(headersFor(native, stream ? 'text/event-stream' : 'application/json'), body, signal);
  };

  return {
    async complete(params, signal, native) {
      const value = await readJson(await send(params, signal, false, native), signal, 'unreadable message');
      if (!isMessage(value)) throw new UpstreamProtocolError('not a message');
      return toChatCompletion(value);
    },
    // Its unreadable events fail the stream at once (readEvents); no onGarbled to tell.
    async stream(params, signal, _onGarbled, native) {
      const events = readEvents(await send(params, signal, true, native));
      const translate = createEventTranslator();
      async function* chunks(): AsyncGenerator<AnthropicChunk> {
        for await (const event of events) yield translate(event);
      }
      return chunks();
    },
    async countTokens(native, model, signal) {
      const answer = await countPool.post(
        headersFor(native, 'application/json'),
        { ...native.body, model },
        signal,
      );
      const value = (await readJson(answer, signal, 'unreadable count')) as { input_tokens?: unknown } | null;
      if (typeof value?.input_tokens !== 'number') throw new UpstreamProtocolError('not a token count');
      return value.input_tokens;
    },
    close: async () => {
      await Promise.all([pool.close(), countPool.close()]);
    },
  };
}
