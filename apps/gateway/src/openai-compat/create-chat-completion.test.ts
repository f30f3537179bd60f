import type { ChatCompletion } from 'openai/resources/chat/completions';
import {
  completionId,
  passThroughCompletion,
  reasoningTokensOf,
  toOpenAiCompletion,
  toOpenAiUsage,
} from './create-chat-completion';

// A provider's completion in OpenAI's format under our name.

const who = { id: completionId('req-1'), created: 1700, lane: 'free' };

const completion = (message: object, usage: object | undefined = undefined) =>
  ({
    id: 'provider-id',
    object: 'chat.completion',
    created: 1,
    model: 'llama-3.3-70b-versatile-dated',
    system_fingerprint: 'fp',
    choices: [
      { index: 0, message: { role: 'assistant', ...message }, finish_reason: 'stop', logprobs: null },
    ],
    usage,
  }) as unknown as ChatCompletion;

describe('toOpenAiCompletion', () => {
  it('answers under our id, time and <lane>/<model>, without provider extras', () => {
    const out = toOpenAiCompletion(completion({ content: 'hi' }), { model: 'llama' }, who);
    expect(out).toEqual(
      expect.objectContaining({
        id: 'chatcmpl-req-1',
        object: 'chat.completion',
        created: 1700,
        model: 'free/llama',
      }),
    );
    expect(out).not.toHaveProperty('system_fingerprint');
    expect(out.choices[0]?.message).toEqual({ role: 'assistant', content: 'hi', refusal: null });
  });

  it('keeps function tool calls, and a null content, with their finish reason', () => {
    const call = { id: 'c1', type: 'function', function: { name: 'get', arguments: '{}' } };
    const out = toOpenAiCompletion(completion({ content: null, tool_calls: [call] }), { model: 'm' }, who);
    expect(out.choices[0]?.message).toEqual({
      role: 'assistant',
      content: null,
      refusal: null,
      tool_calls: [call],
    });
  });

  it("carries the provider's cached and reasoning counts when it reported them, and only then", () => {
    const usage = {
      prompt_tokens: 10,
      completion_tokens: 5,
      total_tokens: 15,
      prompt_tokens_details: { cached_tokens: 4 },
      completion_tokens_details: { reasoning_tokens: 2 },
    };
    expect(toOpenAiCompletion(completion({ content: 'x' }, usage), { model: 'm' }, who).usage).toEqual(usage);
    const plain = { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 };
    expect(toOpenAiCompletion(completion({ content: 'x' }, plain), { model: 'm' }, who).usage).toEqual(plain);
  });
});

describe('usage helpers', () => {
  it('reasoningTokensOf reads the details, undefined when absent', () => {
    expect(reasoningTokensOf({ completion_tokens_details: { reasoning_tokens: 3 } } as never)).toBe(3);
    expect(reasoningTokensOf(undefined)).toBeUndefined();
  });

  it('toOpenAiUsage adds only the details it was given', () => {
    const counts = { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 };
    expect(toOpenAiUsage(counts, undefined, undefined)).toEqual(counts);
    expect(toOpenAiUsage(counts, 0, undefined)).toEqual({
      ...counts,
      prompt_tokens_details: { cached_tokens: 0 },
    });
  });
});

describe('passThroughCompletion', () => {
  it("keeps the provider's answer as sent, only the model replaced", () => {
    const original = completion({ content: 'hi' });
    const out = passThroughCompletion(original, { model: 'llama' }, who);
    expect(out).toEqual({ ...original, model: 'free/llama' });
    expect(Object.keys(out)).toEqual(Object.keys(original));
    expect(original.model).toBe('llama-3.3-70b-versatile-dated');
  });
});
