import type { ChatCompletion, ChatCompletionChunk } from 'openai/resources/chat/completions';
import { UpstreamProtocolError } from './upstream-errors';

/**
 * OpenAI's Responses API answers in the chat shape the relay and accounting
 * speak, for a /v1/responses request passed as sent to a target that serves
 * Responses (catalogue `responses`). The original is attached (`responses`),
 * so the route answers it untouched.
 */

type Json = Record<string, unknown>;
/** A Responses stream event, as parsed from its SSE `data:`. */
export type ResponsesEvent = { type: string } & Json;
/** A chat chunk from a Responses event; `responses` is the event itself, for passthrough. */
export type ResponsesChunk = ChatCompletionChunk & { responses: ResponsesEvent };
/** A chat completion from a Responses answer; `responses` is the answer itself. */
export type ResponsesCompletion = ChatCompletion & { responses: Json };

type Usage = {
  input_tokens?: number;
  output_tokens?: number;
  total_tokens?: number;
  input_tokens_details?: { cached_tokens?: number };
  output_tokens_details?: { reasoning_tokens?: number };
};

/** Responses usage as chat usage, cache and reasoning counts kept. */
function toChatUsage(usage: Usage | null | undefined): ChatCompletion['usage'] {
  if (!usage) return undefined;
  const prompt = usage.input_tokens ?? 0;
  const completion = usage.output_tokens ?? 0;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: usage.total_tokens ?? prompt + completion,
    prompt_tokens_details: { cached_tokens: usage.input_tokens_details?.cached_tokens ?? 0 },
    completion_tokens_details: { reasoning_tokens: usage.output_tokens_details?.reasoning_tokens ?? 0 },
  };
}

function finishOf(response: Json, calls: boolean): 'length' | 'tool_calls' | 'stop' {
  if (response.status === 'incomplete') return 'length';
  return calls ? 'tool_calls' : 'stop';
}

/** A Responses answer as a chat completion (text of message items, function_call items as tool calls). */
export function responseToCompletion(response: Json): ResponsesCompletion {
  if (!Array.isArray(response.output)) throw new UpstreamProtocolError('not a response');
  const items = response.output as Json[];
  const text = items
    .filter((i) => i.type === 'message')
    .flatMap((i) => (Array.isArray(i.content) ? (i.content as Json[]) : []))
    .map((p) => (typeof p.text === 'string' ? p.text : ''))
    .join('');
  const calls = items
    .filter((i) => i.type === 'function_call')
    .map((i) => ({
      id: String(i.call_id),
      type: 'function' as const,
      function: { name: String(i.name), arguments: String(i.arguments ?? '') },
    }));
  return {
    id: String(response.id),
    object: 'chat.completion',
    created: Number(response.created_at ?? 0),
    model: String(response.model ?? ''),
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: text || (calls.length > 0 ? null : ''),
          refusal: null,
          ...(calls.length > 0 ? { tool_calls: calls } : {}),
        },
        logprobs: null,
        finish_reason: finishOf(response, calls.length > 0),
      },
    ],
    usage: toChatUsage(response.usage as Usage | undefined),
    responses: response,
  };
}

/**
 * Turns Responses stream events into chat chunks, one per event so the route
 * can pass every event on in order; events with no chat meaning carry empty
 * `choices`. `response.failed` and `error` fail the stream.
 */
export function createResponsesEventTranslator() {
  /** output_index -> chat tool call index. */
  const calls = new Map<number, number>();
  const chunk = (event: ResponsesEvent, delta: Json | null, extra: Partial<ChatCompletionChunk> = {}) =>
    ({
      id: '',
      object: 'chat.completion.chunk',
      created: 0,
      model: '',
      choices: delta ? [{ index: 0, delta, logprobs: null, finish_reason: null }] : [],
      ...extra,
      responses: event,
    }) as ResponsesChunk;

  return (event: ResponsesEvent): ResponsesChunk => {
    switch (event.type) {
      case 'response.output_text.delta':
        return chunk(event, { content: String(event.delta ?? '') });
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta':
        // No place in the chat formats, but marks the stream as started (relay.ts).
        return chunk(event, { reasoning: String(event.delta ?? '') });
      case 'response.output_item.added': {
        const item = event.item as Json;
        if (item?.type !== 'function_call') return chunk(event, null);
        const index = calls.size;
        calls.set(Number(event.output_index), index);
        const head = {
          index,
          id: String(item.call_id),
          type: 'function',
          function: { name: String(item.name), arguments: '' },
        };
        return chunk(event, { tool_calls: [head] });
      }
      case 'response.function_call_arguments.delta': {
        const index = calls.get(Number(event.output_index));
        if (index === undefined) return chunk(event, null);
        return chunk(event, { tool_calls: [{ index, function: { arguments: String(event.delta ?? '') } }] });
      }
      case 'response.completed':
      case 'response.incomplete': {
        const response = (event.response ?? {}) as Json;
        const out = chunk(event, {}, { usage: toChatUsage(response.usage as Usage | undefined) });
        const choice = out.choices[0];
        if (choice) choice.finish_reason = finishOf(response, calls.size > 0);
        return out;
      }
      case 'response.failed':
      case 'error':
        throw new UpstreamProtocolError('error event in stream');
      default:
        return chunk(event, null);
    }
  };
}
