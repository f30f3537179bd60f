import {
  createResponsesEventTranslator,
  type ResponsesChunk,
  type ResponsesCompletion,
  type ResponsesEvent,
  responseToCompletion,
} from './responses-translate';
import { SseDataLines } from './sse-parser';
import { readProviderError, UpstreamProtocolError } from './upstream-errors';
import { createUpstreamPool, readJson, type UpstreamBody } from './upstream-pool';

/**
 * The Responses API of an OpenAI-protocol provider that serves it
 * (`POST {baseURL}/responses`, catalogue `responses`): a /v1/responses
 * request goes as the client sent it, only `model` set; answers come back in
 * the chat shape with the original attached (responses-translate.ts).
 */
export type ResponsesUpstream = {
  complete(body: Record<string, unknown>, signal: AbortSignal): Promise<ResponsesCompletion>;
  stream(body: Record<string, unknown>, signal: AbortSignal): Promise<AsyncIterableIterator<ResponsesChunk>>;
  close(): Promise<void>;
};

/** The stream's events by their `data:` JSON (which carries its own `type`), until the answer ends. */
async function* readEvents(body: UpstreamBody): AsyncGenerator<ResponsesEvent> {
  body.setEncoding('utf8');
  const pieces = body as AsyncIterable<unknown> as AsyncIterable<string>;
  const lines = new SseDataLines();
  try {
    for await (const piece of pieces) {
      lines.push(piece);
      for (let data = lines.next(); data !== null; data = lines.next()) {
        if (data === '[DONE]') return;
        let event: ResponsesEvent;
        try {
          event = JSON.parse(data) as ResponsesEvent;
        } catch {
          throw new UpstreamProtocolError('unreadable stream event');
        }
        if (typeof event?.type !== 'string') throw new UpstreamProtocolError('stream event without a type');
        yield event;
        if (event.type === 'response.completed' || event.type === 'response.incomplete') return;
      }
    }
  } finally {
    body.destroy();
  }
}

export function createResponsesUpstream(baseUrl: string, apiKey: string): ResponsesUpstream {
  const pool = createUpstreamPool(baseUrl, 'responses', readProviderError);
  const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
  return {
    async complete(body, signal) {
      const answer = await pool.post({ ...headers, accept: 'application/json' }, body, signal);
      const value = await readJson(answer, signal, 'unreadable response');
      if (typeof value !== 'object' || value === null) throw new UpstreamProtocolError('not a response');
      return responseToCompletion(value as Record<string, unknown>);
    },
    async stream(body, signal) {
      const events = readEvents(await pool.post({ ...headers, accept: 'text/event-stream' }, body, signal));
      const translate = createResponsesEventTranslator();
      async function* chunks(): AsyncGenerator<ResponsesChunk> {
        for await (const event of events) yield translate(event);
      }
      return chunks();
    },
    close: () => pool.close(),
  };
}
