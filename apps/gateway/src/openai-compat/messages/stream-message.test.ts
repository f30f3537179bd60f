import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import type { SseWriter } from '../../ai/streaming/sse-writer';
import { anthropicStreamFormat } from './stream-message';

const target = { provider: 'openai' as const, model: 'm' };
const usage = { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 };

function recorder() {
  const events: Array<{ type: string } & Record<string, unknown>> = [];
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
    expect(events.map((e) => `${e.type}${'index' in e ? `:${e.index}` : ''}`)).toEqual([
      'message_start',
      'ping',
      'content_block_start:0',
      'content_block_delta:0',
      'content_block_stop:0',
      'content_block_start:1',
      'content_block_delta:1',
      'content_block_stop:1',
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
    expect(events.map((e) => `${e.type}${'index' in e ? `:${e.index}` : ''}`)).toEqual([
      'message_start',
      'content_block_start:0',
      'content_block_delta:0',
      'content_block_stop:0',
      'content_block_start:1',
      'content_block_delta:1',
      'content_block_stop:1',
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
});
