import type { ResponsesRequest } from '@platform/contract';
import type { ChatCompletion } from 'openai/resources/chat/completions';
import {
  functionCallItem,
  messageItem,
  outputMessage,
  passThroughResponse,
  statusOf,
  toResponse,
  toResponsesUsage,
} from './create-response';

// A chat completion as a Responses answer, and back as a chat turn (what a
// stored response continues from).

const who = { id: 'resp_r1', requestId: 'r1', created: 1700, lane: 'standard' };

describe('Responses answer parts', () => {
  it('a length finish is incomplete for max_output_tokens; anything else completed', () => {
    expect(statusOf('length')).toEqual({ status: 'incomplete', incomplete: 'max_output_tokens' });
    expect(statusOf('stop')).toEqual({ status: 'completed' });
    expect(statusOf(undefined)).toEqual({ status: 'completed' });
  });

  it('usage carries the cached and reasoning counts, zero when not reported', () => {
    const usage = { prompt_tokens: 10, completion_tokens: 4, total_tokens: 14 };
    expect(toResponsesUsage(usage, { read: 3, write: 0 }, 2)).toEqual({
      input_tokens: 10,
      input_tokens_details: { cached_tokens: 3 },
      output_tokens: 4,
      output_tokens_details: { reasoning_tokens: 2 },
      total_tokens: 14,
    });
    expect(toResponsesUsage(usage, null, undefined).output_tokens_details).toEqual({ reasoning_tokens: 0 });
  });

  it('an answer turns back into one assistant chat turn: text joined, calls kept', () => {
    const output = [
      messageItem(who, 'Hello', 'completed'),
      functionCallItem(who, 0, { id: 'c1', name: 'get', arguments: '{}' }, 'completed'),
    ];
    expect(outputMessage(output)).toEqual({
      role: 'assistant',
      content: 'Hello',
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get', arguments: '{}' } }],
    });
    expect(outputMessage([])).toEqual({ role: 'assistant', content: null });
  });
});

describe('toResponse', () => {
  const completion = {
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: 'Checking.',
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get', arguments: '{"q":1}' } }],
        },
        finish_reason: 'tool_calls',
      },
    ],
    usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 },
  } as unknown as ChatCompletion;

  it('a message item with the text and a function_call item per call, under our ids', () => {
    const answer = toResponse(completion, 'gpt', who, { model: 'standard/gpt' } as ResponsesRequest);
    expect(answer.id).toBe('resp_r1');
    expect(answer.model).toBe('standard/gpt');
    expect(answer.status).toBe('completed');
    expect(answer.output.map((i) => [i.type, i.id])).toEqual([
      ['message', 'msg_r1'],
      ['function_call', 'fc_r1_0'],
    ]);
    expect(answer.usage?.total_tokens).toBe(8);
  });

  it("a target's own Responses answer goes out as sent, only the model set", () => {
    const original = { id: 'resp_provider', output: [], model: 'gpt-2025' };
    expect(passThroughResponse(original, 'gpt', who)).toEqual({ ...original, model: 'standard/gpt' });
  });
});
