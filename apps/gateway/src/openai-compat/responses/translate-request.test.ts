import type { ResponsesRequest } from '@platform/contract';
import { toChatParams, toMessages } from './translate-request';

// A Responses request in the chat shape: what maps, what is dropped and named.

const req = (r: object) => r as ResponsesRequest;

describe('toMessages', () => {
  it('a string input is one user turn', () => {
    expect(toMessages(req({ input: 'hi' }), [])).toEqual([{ role: 'user', content: 'hi' }]);
  });

  it('developer turns become system turns; text parts join; images stay image parts', () => {
    const dropped: string[] = [];
    const messages = toMessages(
      req({
        input: [
          { role: 'developer', content: 'be brief' },
          {
            role: 'user',
            content: [
              { type: 'input_text', text: 'what is ' },
              { type: 'input_text', text: 'this?' },
            ],
          },
          {
            role: 'user',
            content: [
              { type: 'input_text', text: 'and' },
              { type: 'input_image', image_url: 'https://x/img.png', detail: 'low' },
              { type: 'input_file', file_id: 'f1' },
            ],
          },
        ],
      }),
      dropped,
    );
    expect(messages).toEqual([
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'what is this?' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'and' },
          { type: 'image_url', image_url: { url: 'https://x/img.png', detail: 'low' } },
        ],
      },
    ]);
    expect(dropped).toEqual(['input.content.input_file']);
  });

  it('consecutive function calls form one assistant turn, and their outputs are tool turns', () => {
    const messages = toMessages(
      req({
        input: [
          { type: 'function_call', call_id: 'c1', name: 'a', arguments: '{}' },
          { type: 'function_call', call_id: 'c2', name: 'b', arguments: '{"x":1}' },
          { type: 'function_call_output', call_id: 'c1', output: 'one' },
        ],
      }),
      [],
    );
    expect(messages).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'a', arguments: '{}' } },
          { id: 'c2', type: 'function', function: { name: 'b', arguments: '{"x":1}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'one' },
    ]);
  });

  it('items without a chat form (reasoning) are dropped and named once', () => {
    const dropped: string[] = [];
    toMessages(req({ input: [{ type: 'reasoning' }, { type: 'reasoning' }] }), dropped);
    expect(dropped).toEqual(['input.reasoning']);
  });
});

describe('toChatParams', () => {
  it('maps the limits, sampling, reasoning effort and JSON schema format', () => {
    const params = toChatParams(
      req({
        max_output_tokens: 50,
        temperature: 0.3,
        top_p: 0.9,
        reasoning: { effort: 'low' },
        text: { format: { type: 'json_schema', name: 'out', schema: { type: 'object' }, strict: true } },
      }),
      [],
      [],
      false,
    );
    expect(params).toEqual({
      messages: [],
      max_tokens: 50,
      temperature: 0.3,
      top_p: 0.9,
      reasoning_effort: 'low',
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'out', schema: { type: 'object' }, strict: true },
      },
    });
  });

  it('function tools map with their choice; hosted tools are dropped and named', () => {
    const dropped: string[] = [];
    const params = toChatParams(
      req({
        tools: [{ type: 'function', name: 'get', parameters: { type: 'object' } }, { type: 'web_search' }],
        tool_choice: { type: 'function', name: 'get' },
        parallel_tool_calls: false,
      }),
      [],
      dropped,
      false,
    );
    expect(params.tools).toEqual([
      { type: 'function', function: { name: 'get', parameters: { type: 'object' } } },
    ]);
    expect(params.tool_choice).toEqual({ type: 'function', function: { name: 'get' } });
    expect(params.parallel_tool_calls).toBe(false);
    expect(dropped).toEqual(['tools.web_search']);
  });

  it('unknown top-level fields, reasoning summaries and store without a store are named as dropped', () => {
    const dropped: string[] = [];
    toChatParams(
      req({ truncation: 'auto', reasoning: { summary: 'auto' }, store: true, include: [] }),
      [],
      dropped,
      false,
    );
    expect(dropped).toEqual(['truncation', 'reasoning.summary', 'store']);
    const kept: string[] = [];
    toChatParams(req({ store: true }), [], kept, true);
    expect(kept).toEqual([]);
  });
});
