import type { ResponsesRequest } from '@platform/contract';
import { AppError } from '@platform/errors';
import type { ResponsesChunk, ResponsesEvent } from '../../ai/providers/responses-translate';
import type { StreamFormat } from '../../ai/streaming/relay';
import type { SseWriter } from '../../ai/streaming/sse-writer';
import { reasoningTokensOf } from '../create-chat-completion';
import {
  functionCallItem,
  messageItem,
  type OutputItem,
  outputText,
  type ResponseAnswer,
  type ResponseIdentity,
  responseObject,
  statusOf,
  toResponsesUsage,
} from './create-response';

type OpenItem =
  | { kind: 'text'; outputIndex: number; text: string }
  | { kind: 'call'; outputIndex: number; callIndex: number; id: string; name: string; arguments: string };

/**
 * `stream: true` of `POST /v1/responses`: the Responses event sequence,
 * every event named (`event:`) and numbered (`sequence_number`):
 * `response.created`, `response.in_progress`, per output item
 * `response.output_item.added`, its deltas (`response.output_text.delta`
 * inside a content part, or `response.function_call_arguments.delta`), the
 * matching `.done` events and `response.output_item.done`, then
 * `response.completed` with the whole response and usage. A failure after
 * the start ends with an `error` event, which the SDK raises. From a target
 * serving Responses, its own events go on as sent, `model` set.
 *
 * Over 80 lines: one event state machine whose state (output items, their indexes) the three StreamFormat methods share.
 */
export function responsesStreamFormat(
  who: ResponseIdentity,
  request: ResponsesRequest,
  keep?: (response: ResponseAnswer) => Promise<void>,
): StreamFormat {
  let sequence = 0;
  let started = false;
  let open: OpenItem | null = null;
  const done: OutputItem[] = [];
  let reasoning: number | undefined;
  /** The target serves Responses: its events went to the client as sent (only `model` set). */
  let passed = false;
  /**
   * The target's own last event (`response.completed` / `.incomplete`), held
   * back: `done` sends it once the record is durable (the frame calls `done`
   * only then), and a record that cannot be kept ends the stream in `error`.
   */
  let held: { type: string; event: ResponsesEvent } | null = null;
  const passOn = (sse: SseWriter, event: ResponsesEvent, model: string) => {
    passed = true;
    const response = event.response as Record<string, unknown> | undefined;
    const out = response ? { ...event, response: { ...response, model } } : event;
    if (event.type === 'response.completed' || event.type === 'response.incomplete') {
      held = { type: event.type, event: out };
      return undefined;
    }
    return sse.send(event.type, out);
  };
  const send = (sse: SseWriter, type: string, data: object) => {
    const event = { type, sequence_number: sequence, ...data };
    sequence += 1;
    return sse.send(type, event);
  };
  const begin = (sse: SseWriter, model: string) => {
    started = true;
    const response = responseObject(who, request, model, { status: 'in_progress', output: [], usage: null });
    send(sse, 'response.created', { response });
    return send(sse, 'response.in_progress', { response });
  };
  const close = (sse: SseWriter) => {
    if (!open) return undefined;
    const item = open;
    open = null;
    if (item.kind === 'text') {
      const base = {
        item_id: messageItem(who, '', 'completed').id,
        output_index: item.outputIndex,
        content_index: 0,
      };
      send(sse, 'response.output_text.done', { ...base, text: item.text, logprobs: [] });
      send(sse, 'response.content_part.done', { ...base, part: outputText(item.text) });
      const final = messageItem(who, item.text, 'completed');
      done.push(final);
      return send(sse, 'response.output_item.done', { output_index: item.outputIndex, item: final });
    }
    const final = functionCallItem(who, item.callIndex, item, 'completed');
    send(sse, 'response.function_call_arguments.done', {
      item_id: final.id,
      output_index: item.outputIndex,
      name: item.name,
      arguments: item.arguments,
    });
    done.push(final);
    return send(sse, 'response.output_item.done', { output_index: item.outputIndex, item: final });
  };

  return {
    chunk(sse, chunk, target) {
      const native = (chunk as Partial<ResponsesChunk>).responses;
      if (native) return passOn(sse, native, `${who.lane}/${target.model}`);
      let wait: Promise<void> | undefined;
      if (chunk.usage) reasoning = reasoningTokensOf(chunk.usage) ?? reasoning;
      if (!started) wait = begin(sse, target.model);
      const delta = chunk.choices[0]?.delta;
      if (delta?.content) {
        if (open?.kind !== 'text') {
          close(sse);
          open = { kind: 'text', outputIndex: done.length, text: '' };
          const item = messageItem(who, '', 'in_progress');
          send(sse, 'response.output_item.added', { output_index: open.outputIndex, item });
          send(sse, 'response.content_part.added', {
            item_id: item.id,
            output_index: open.outputIndex,
            content_index: 0,
            part: outputText(''),
          });
        }
        open.text += delta.content;
        wait =
          send(sse, 'response.output_text.delta', {
            item_id: messageItem(who, '', 'completed').id,
            output_index: open.outputIndex,
            content_index: 0,
            delta: delta.content,
            logprobs: [],
          }) ?? wait;
      }
      for (const call of delta?.tool_calls ?? []) {
        if (open?.kind !== 'call' || open.callIndex !== call.index) {
          close(sse);
          const item: OpenItem = {
            kind: 'call',
            outputIndex: done.length,
            callIndex: call.index,
            id: call.id ?? `call_${call.index}`,
            name: call.function?.name ?? '',
            arguments: '',
          };
          open = item;
          send(sse, 'response.output_item.added', {
            output_index: item.outputIndex,
            item: functionCallItem(who, item.callIndex, item, 'in_progress'),
          });
        }
        const piece = call.function?.arguments;
        if (piece && open.kind === 'call') {
          open.arguments += piece;
          wait =
            send(sse, 'response.function_call_arguments.delta', {
              item_id: functionCallItem(who, open.callIndex, open, 'in_progress').id,
              output_index: open.outputIndex,
              delta: piece,
            }) ?? wait;
        }
      }
      return wait;
    },
    async done(sse, end) {
      if (passed) {
        if (!held) return;
        // Kept before the last event, as below.
        if (keep) await keep(held.event.response as ResponseAnswer);
        await sse.send(held.type, held.event);
        return;
      }
      if (!started) begin(sse, end.target.model);
      close(sse);
      const response = responseObject(who, request, end.target.model, {
        ...statusOf(end.finishReason),
        stored: keep !== undefined,
        output: done,
        usage: toResponsesUsage(end.usage, end.cache, reasoning),
      });
      // Kept before the last event: a client continuing from it at once finds it.
      if (keep) await keep(response);
      await send(sse, response.status === 'incomplete' ? 'response.incomplete' : 'response.completed', {
        response,
      });
    },
    async error(sse, code, cause) {
      const err = new AppError(code);
      // Why a broken stream could not be continued follows our public message (never provider text).
      const message = cause ? `${err.publicMessage}: ${cause}` : err.publicMessage;
      await send(sse, 'error', { code, message, param: null });
    },
  };
}
