import type { ChatCompletion } from 'openai/resources/chat/completions';
import {
  messageId,
  toAnthropicMessage,
  toAnthropicUsage,
  toMessagesAnswer,
  toStopReason,
} from './create-message';

// A chat completion as an Anthropic message, for clients of /v1/messages
// whose request went to an OpenAI-compatible target.

const who = { id: messageId('req-1'), lane: 'standard' };
const completion = (message: object, finish = 'stop', usage?: object) =>
  ({
    id: 'x',
    choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finish }],
    usage,
  }) as unknown as ChatCompletion;

describe('toStopReason', () => {
  it.each([
    ['length', 'max_tokens'],
    ['tool_calls', 'tool_use'],
    ['function_call', 'tool_use'],
    ['content_filter', 'refusal'],
    ['stop', 'end_turn'],
    [null, 'end_turn'],
  ])('%s is %s', (finish, stop) => {
    expect(toStopReason(finish)).toBe(stop);
  });
});

describe('toAnthropicUsage', () => {
  it('input tokens leave out the cached part, which is counted beside them', () => {
    const usage = { prompt_tokens: 100, completion_tokens: 7, total_tokens: 107 };
    expect(toAnthropicUsage(usage, { read: 60, write: 10 })).toEqual({
      input_tokens: 30,
      output_tokens: 7,
      cache_creation_input_tokens: 10,
      cache_read_input_tokens: 60,
    });
    expect(toAnthropicUsage(usage, null).input_tokens).toBe(100);
  });
});

describe('toAnthropicMessage', () => {
  it('text and tool calls become content blocks under our id and <lane>/<model>', () => {
    const message = toAnthropicMessage(
      completion(
        {
          content: 'Let me look.',
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get', arguments: '{"q":"x"}' } }],
        },
        'tool_calls',
        { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 },
      ),
      { model: 'gpt' },
      who,
    );
    expect(message).toEqual({
      id: 'msg_req-1',
      type: 'message',
      role: 'assistant',
      model: 'standard/gpt',
      content: [
        { type: 'text', text: 'Let me look.' },
        { type: 'tool_use', id: 'c1', name: 'get', input: { q: 'x' } },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: {
        input_tokens: 5,
        output_tokens: 3,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
      },
    });
  });

  it('arguments that are not a JSON object become an empty input', () => {
    const message = toAnthropicMessage(
      completion({
        content: null,
        tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '[1' } }],
      }),
      { model: 'm' },
      who,
    );
    expect(message.content).toEqual([{ type: 'tool_use', id: 'c', name: 'f', input: {} }]);
  });

  it("an Anthropic target's own message goes out as it came", () => {
    const original = { id: 'msg_provider', type: 'message' };
    const answer = toMessagesAnswer(
      { ...completion({ content: 'x' }), anthropic: original } as never,
      { model: 'm' },
      who,
    );
    expect(answer).toBe(original);
  });
});
