import { ERROR_CODES } from '@platform/errors';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import type { StreamFormat } from '../../ai/streaming/relay';
import type { SseWriter } from '../../ai/streaming/sse-writer';
import { type MessageIdentity, toAnthropicUsage, toStopReason } from './create-message';
import { anthropicErrorType } from './errors';

type AnthropicEvent = { type: string } & Record<string, unknown>;

function write(sse: SseWriter, event: AnthropicEvent): Promise<void> | undefined {
  return sse.send(event.type, event);
}

/**
 * `stream: true` of `POST /v1/messages`, Anthropic's event sequence.
 *
 * From an Anthropic target every event goes out as it came (the chunks carry
 * the original event), so thinking blocks, signatures and cache counts pass
 * untouched. From an OpenAI-compatible target the events are built from the
 * chat chunks: `message_start` and `ping`, then per text run or tool call a
 * `content_block_start`, its `text_delta`/`input_json_delta`s and
 * `content_block_stop`, then `message_delta` (stop reason, usage) and
 * `message_stop`. A failure after the start ends the stream with an `error`
 * event, which the SDKs raise.
 *
 * Over 80 lines: one event state machine whose state (open blocks, their indexes) the three StreamFormat methods share.
 */
export function anthropicStreamFormat(who: MessageIdentity): StreamFormat {
  let started = false;
  /** The passed-through events already ended the message (message_delta, message_stop). */
  let deltaSent = false;
  let stopSent = false;
  /**
   * Index of the open content block, and what it is (`text`, the chat tool
   * call index, or `passed` for a block of passed-through events). Tracked for
   * both kinds of events, so a stream continued on another target after a cut
   * (relay.ts) still reads as one message.
   */
  let block: { index: number; kind: 'text' | number | 'passed' } | null = null;
  let nextIndex = 0;

  /** Notes what a passed-through event opened or closed. */
  const observe = (event: AnthropicEvent) => {
    if (event.type === 'message_start') started = true;
    else if (event.type === 'content_block_start') {
      block = { index: Number(event.index), kind: 'passed' };
      nextIndex = Number(event.index) + 1;
    } else if (event.type === 'content_block_stop') block = null;
    else if (event.type === 'message_delta') deltaSent = true;
    else if (event.type === 'message_stop') stopSent = true;
  };

  const start = (sse: SseWriter, model: string) => {
    started = true;
    write(sse, {
      type: 'message_start',
      message: {
        id: who.id,
        type: 'message',
        role: 'assistant',
        model: `${who.lane}/${model}`,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: {
          input_tokens: 0,
          output_tokens: 0,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
        },
      },
    });
    return write(sse, { type: 'ping' });
  };
  const closeBlock = (sse: SseWriter) => {
    if (!block) return undefined;
    const wait = write(sse, { type: 'content_block_stop', index: block.index });
    block = null;
    return wait;
  };
  const openBlock = (sse: SseWriter, kind: 'text' | number, contentBlock: Record<string, unknown>) => {
    closeBlock(sse);
    block = { index: nextIndex, kind };
    nextIndex += 1;
    return write(sse, { type: 'content_block_start', index: block.index, content_block: contentBlock });
  };

  const translate = (sse: SseWriter, chunk: ChatCompletionChunk, model: string) => {
    let wait: Promise<void> | undefined;
    if (!started) wait = start(sse, model);
    const delta = chunk.choices[0]?.delta;
    if (delta?.content) {
      if (block?.kind !== 'text') openBlock(sse, 'text', { type: 'text', text: '' });
      wait =
        write(sse, {
          type: 'content_block_delta',
          index: block?.index,
          delta: { type: 'text_delta', text: delta.content },
        }) ?? wait;
    }
    for (const call of delta?.tool_calls ?? []) {
      if (call.id || block?.kind !== call.index) {
        openBlock(sse, call.index, {
          type: 'tool_use',
          id: call.id ?? `toolu_${call.index}`,
          name: call.function?.name ?? '',
          input: {},
        });
      }
      const partial = call.function?.arguments;
      if (partial) {
        wait =
          write(sse, {
            type: 'content_block_delta',
            index: block?.index,
            delta: { type: 'input_json_delta', partial_json: partial },
          }) ?? wait;
      }
    }
    return wait;
  };

  return {
    chunk(sse, chunk, target) {
      const original = (chunk as ChatCompletionChunk & { anthropic?: AnthropicEvent }).anthropic;
      if (original) {
        observe(original);
        return write(sse, original);
      }
      return translate(sse, chunk, target.model);
    },
    async done(sse, end) {
      // What an Anthropic target already sent of the ending is not repeated.
      if (stopSent) return;
      if (!started) await start(sse, end.target.model);
      await closeBlock(sse);
      if (!deltaSent) {
        await write(sse, {
          type: 'message_delta',
          delta: { stop_reason: toStopReason(end.finishReason), stop_sequence: null },
          usage: toAnthropicUsage(end.usage, end.cache),
        });
      }
      await write(sse, { type: 'message_stop' });
    },
    async error(sse, code, cause) {
      // Why a broken stream could not be continued follows our public message (never provider text).
      const message = cause ? `${ERROR_CODES[code].error}: ${cause}` : ERROR_CODES[code].error;
      await write(sse, {
        type: 'error',
        error: { type: anthropicErrorType(ERROR_CODES[code].status), message },
      });
    },
  };
}
