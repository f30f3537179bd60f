import { createEventTranslator, toAnthropicRequest, toChatCompletion } from './anthropic-translate';

describe('toAnthropicRequest', () => {
  it('puts system messages in system and parallel tool results in one user turn', () => {
    const request = toAnthropicRequest({
      model: 'claude-x',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'developer', content: 'Use tools.' },
        { role: 'user', content: 'Weather in Paris and Rome?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'c1', type: 'function', function: { name: 'w', arguments: '{"city":"Paris"}' } },
            { id: 'c2', type: 'function', function: { name: 'w', arguments: 'not json' } },
          ],
        },
        { role: 'tool', tool_call_id: 'c1', content: '18C' },
        { role: 'tool', tool_call_id: 'c2', content: '21C' },
      ],
      stop: 'END',
      tool_choice: 'required',
      tools: [{ type: 'function', function: { name: 'w', parameters: { type: 'object' } } }],
      user: 'u1',
    });
    expect(request).toEqual({
      model: 'claude-x',
      max_tokens: 4096,
      system: 'Be brief.\n\nUse tools.',
      stop_sequences: ['END'],
      metadata: { user_id: 'u1' },
      tools: [{ name: 'w', input_schema: { type: 'object' } }],
      tool_choice: { type: 'any' },
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Weather in Paris and Rome?' }] },
        {
          role: 'assistant',
          content: [
            { type: 'tool_use', id: 'c1', name: 'w', input: { city: 'Paris' } },
            { type: 'tool_use', id: 'c2', name: 'w', input: {} },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'c1', content: '18C' },
            { type: 'tool_result', tool_use_id: 'c2', content: '21C' },
          ],
        },
      ],
    });
  });
});

describe('toChatCompletion', () => {
  it('counts cache reads and writes in prompt_tokens and names them in the details', () => {
    const completion = toChatCompletion({
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: 'claude-x',
      content: [
        { type: 'thinking', thinking: 'hmm', signature: 's' },
        { type: 'text', text: 'Hi' },
      ],
      stop_reason: 'max_tokens',
      stop_sequence: null,
      usage: {
        input_tokens: 5,
        output_tokens: 2,
        cache_creation_input_tokens: 10,
        cache_read_input_tokens: 100,
      },
    });
    expect(completion.choices[0]).toMatchObject({ message: { content: 'Hi' }, finish_reason: 'length' });
    expect(completion.usage).toEqual({
      prompt_tokens: 115,
      completion_tokens: 2,
      total_tokens: 117,
      prompt_tokens_details: { cached_tokens: 100, cache_write_tokens: 10 },
    });
  });
});

describe('createEventTranslator', () => {
  it('gives one chunk per event, tool calls by their own index, usage from both ends of the stream', () => {
    const translate = createEventTranslator();
    const events = [
      {
        type: 'message_start',
        message: {
          id: 'm',
          model: 'c',
          usage: { input_tokens: 3, cache_read_input_tokens: 7, output_tokens: 1 },
        },
      },
      { type: 'ping' },
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hi' } },
      { type: 'content_block_stop', index: 0 },
      {
        type: 'content_block_start',
        index: 1,
        content_block: { type: 'tool_use', id: 't', name: 'f', input: {} },
      },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"a":' } },
      { type: 'content_block_stop', index: 1 },
      { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 9 } },
      { type: 'message_stop' },
    ];
    const chunks = events.map((e) => translate(e));
    expect(chunks.map((c) => c.anthropic)).toEqual(events);
    expect(chunks.map((c) => c.choices[0]?.delta ?? null)).toEqual([
      { role: 'assistant', content: '' },
      null,
      null,
      { content: 'Hi' },
      null,
      { tool_calls: [{ index: 0, id: 't', type: 'function', function: { name: 'f', arguments: '' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '{"a":' } }] },
      null,
      {},
      null,
    ]);
    expect(chunks[8]?.choices[0]?.finish_reason).toBe('tool_calls');
    expect(chunks[8]?.usage).toMatchObject({ prompt_tokens: 10, completion_tokens: 9, total_tokens: 19 });
  });
});
