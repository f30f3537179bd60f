import { createResponsesEventTranslator, responseToCompletion } from './responses-translate';
import { UpstreamProtocolError } from './upstream-errors';

// OpenAI's Responses answers and events in the chat shape the relay and the
// accounting read: text, tool calls, finish reason and usage.

const usage = {
  input_tokens: 12,
  output_tokens: 5,
  total_tokens: 17,
  input_tokens_details: { cached_tokens: 4 },
  output_tokens_details: { reasoning_tokens: 2 },
};

describe('responseToCompletion', () => {
  it('joins the text of message items and carries the usage, cached and reasoning tokens included', () => {
    const completion = responseToCompletion({
      id: 'resp_1',
      model: 'gpt',
      created_at: 10,
      status: 'completed',
      output: [
        { type: 'reasoning', summary: [] },
        {
          type: 'message',
          content: [
            { type: 'output_text', text: 'Hel' },
            { type: 'output_text', text: 'lo' },
          ],
        },
      ],
      usage,
    });
    expect(completion.choices[0]?.message.content).toBe('Hello');
    expect(completion.choices[0]?.finish_reason).toBe('stop');
    expect(completion.usage).toEqual({
      prompt_tokens: 12,
      completion_tokens: 5,
      total_tokens: 17,
      prompt_tokens_details: { cached_tokens: 4 },
      completion_tokens_details: { reasoning_tokens: 2 },
    });
    expect(completion.responses.id).toBe('resp_1');
  });

  it('function_call items become tool calls, with null content and finish reason tool_calls', () => {
    const completion = responseToCompletion({
      id: 'r',
      output: [{ type: 'function_call', call_id: 'c1', name: 'get', arguments: '{"a":1}' }],
    });
    expect(completion.choices[0]?.message).toEqual(
      expect.objectContaining({
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get', arguments: '{"a":1}' } }],
      }),
    );
    expect(completion.choices[0]?.finish_reason).toBe('tool_calls');
  });

  it('an incomplete response ended by its limit is finish reason length', () => {
    expect(
      responseToCompletion({ id: 'r', status: 'incomplete', output: [] }).choices[0]?.finish_reason,
    ).toBe('length');
  });

  it('a body without output is not a response', () => {
    expect(() => responseToCompletion({ id: 'r' })).toThrow(UpstreamProtocolError);
  });
});

describe('createResponsesEventTranslator', () => {
  it('text deltas become content chunks, and every event keeps its original', () => {
    const translate = createResponsesEventTranslator();
    const event = { type: 'response.output_text.delta', delta: 'Hi' };
    const chunk = translate(event);
    expect(chunk.choices[0]?.delta).toEqual({ content: 'Hi' });
    expect(chunk.responses).toBe(event);
    expect(translate({ type: 'response.created' }).choices).toEqual([]);
  });

  it('a function call streams as a head with its id and name, then its arguments, at one index', () => {
    const translate = createResponsesEventTranslator();
    const head = translate({
      type: 'response.output_item.added',
      output_index: 3,
      item: { type: 'function_call', call_id: 'c9', name: 'lookup' },
    });
    expect(head.choices[0]?.delta.tool_calls).toEqual([
      { index: 0, id: 'c9', type: 'function', function: { name: 'lookup', arguments: '' } },
    ]);
    const args = translate({
      type: 'response.function_call_arguments.delta',
      output_index: 3,
      delta: '{"q"',
    });
    expect(args.choices[0]?.delta.tool_calls).toEqual([{ index: 0, function: { arguments: '{"q"' } }]);
    // Arguments of an item never announced have no chat meaning.
    expect(
      translate({ type: 'response.function_call_arguments.delta', output_index: 7, delta: 'x' }).choices,
    ).toEqual([]);
  });

  it('the completed event carries the usage and the finish reason', () => {
    const translate = createResponsesEventTranslator();
    const done = translate({ type: 'response.completed', response: { status: 'completed', usage } });
    expect(done.usage?.total_tokens).toBe(17);
    expect(done.choices[0]?.finish_reason).toBe('stop');
    const cut = createResponsesEventTranslator()({
      type: 'response.incomplete',
      response: { status: 'incomplete' },
    });
    expect(cut.choices[0]?.finish_reason).toBe('length');
  });

  it('a failed response or an error event fails the stream', () => {
    const translate = createResponsesEventTranslator();
    expect(() => translate({ type: 'response.failed' })).toThrow(UpstreamProtocolError);
    expect(() => translate({ type: 'error' })).toThrow(UpstreamProtocolError);
  });
});
