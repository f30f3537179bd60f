import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import type { SseWriter } from '../../ai/streaming/sse-writer';
import { anthropicStreamFormat } from './stream-message';

const target = { provider: 'openai' as const, model: 'm' };
const usage = { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 };

type SentEvent = { type: string } & Record<string, unknown>;

function recorder() {
  const events: SentEvent[] = [];
  const sse: SseWriter = {
    send: (_event, data) => {
      events.push(data as { type: string });
      return undefined;
    },
    sendData: () => undefined,
    end: () => {},
  };
  return { sse, events };
}

/** Each event as `type` or, for a content block, `type:index`. */
function labels(events: SentEvent[]): string[] {
  return events.map((e) => `${e.type}${'index' in e ? `:${e.index}` : ''}`);
}

/** The start, delta and stop of content block `index`, as `labels` names them. */
function block(index: number): string[] {
  return [`content_block_start:${index}`, `content_block_delta:${index}`, `content_block_stop:${index}`];
}

function chunk(delta: object, anthropic?: object): ChatCompletionChunk {
  return {
    id: 'c',
    object: 'chat.completion.chunk',
    created: 0,
    model: 'm',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: null }],
    ...(anthropic ? { anthropic } : {}),
  } as ChatCompletionChunk;
}

describe('anthropicStreamFormat', () => {
  it('builds the whole event sequence from chat chunks', async () => {
    const { sse, events } = recorder();
    const format = anthropicStreamFormat({ id: 'msg_1', lane: 'std' });
    format.chunk(sse, chunk({ role: 'assistant', content: '' }), target);
    format.chunk(sse, chunk({ content: 'Hi' }), target);
    format.chunk(
      sse,
      chunk({ tool_calls: [{ index: 0, id: 't1', function: { name: 'f', arguments: '' } }] }),
      target,
    );
    format.chunk(sse, chunk({ tool_calls: [{ index: 0, function: { arguments: '{}' } }] }), target);
    await format.done(sse, { target, finishReason: 'tool_calls', usage, cache: { read: 4, write: 0 } });
    expect(labels(events)).toEqual([
      'message_start',
      'ping',
      ...block(0),
      ...block(1),
      'message_delta',
      'message_stop',
    ]);
    expect(events.at(-2)).toMatchObject({
      delta: { stop_reason: 'tool_use' },
      usage: { input_tokens: 6, output_tokens: 2, cache_read_input_tokens: 4 },
    });
  });

  it('passes Anthropic events through and goes on as one message when chat chunks follow', async () => {
    const { sse, events } = recorder();
    const format = anthropicStreamFormat({ id: 'msg_1', lane: 'std' });
    const raw = [
      { type: 'message_start', message: { id: 'msg_up' } },
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hel' } },
    ];
    for (const event of raw) format.chunk(sse, chunk({}, event), target);
    // The first target was cut; a continuation from an OpenAI-compatible one follows.
    format.chunk(sse, chunk({ content: 'lo' }), target);
    await format.done(sse, { target, finishReason: 'stop', usage, cache: null });
    expect(labels(events)).toEqual([
      'message_start',
      ...block(0),
      ...block(1),
      'message_delta',
      'message_stop',
    ]);
  });

  it('adds only message_stop when the Anthropic target sent its message_delta', async () => {
    const { sse, events } = recorder();
    const format = anthropicStreamFormat({ id: 'msg_1', lane: 'std' });
    format.chunk(sse, chunk({}, { type: 'message_start', message: {} }), target);
    format.chunk(
      sse,
      chunk({}, { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: {} }),
      target,
    );
    await format.done(sse, { target, finishReason: 'stop', usage, cache: null });
    expect(events.map((e) => e.type)).toEqual(['message_start', 'message_delta', 'message_stop']);
  });

  it('an error after a cut names it after the public message', async () => {
    const { sse, events } = recorder();
    const format = anthropicStreamFormat({ id: 'msg_1', lane: 'std' });
    await format.error(
      sse,
      'upstream_error',
      'the stream from openai/m was cut; no target was left to continue it',
    );
    expect(events).toEqual([
      {
        type: 'error',
        error: {
          type: 'api_error',
          message:
            'upstream AI service error: the stream from openai/m was cut; no target was left to continue it',
        },
      },
    ]);
    await format.error(sse, 'service_unavailable');
    expect(events[1]).toMatchObject({ error: { message: 'service unavailable' } });
  });
});
