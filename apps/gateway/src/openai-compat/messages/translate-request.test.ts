import { type AnthropicMessagesRequest, ZAnthropicMessagesRequest } from '@platform/contract';
import { toChatParams } from './translate-request';

const request = (extra: Record<string, unknown>): AnthropicMessagesRequest =>
  ZAnthropicMessagesRequest.parse({
    model: 'standard',
    max_tokens: 100,
    messages: [{ role: 'user', content: 'Hi' }],
    ...extra,
  });

describe('toChatParams (Messages -> chat, docs/gateway-ai.md#field-policy)', () => {
  it('folds the system prompt and every system turn into one leading system message', () => {
    const { params, dropped } = toChatParams(
      request({
        system: 'Be brief.',
        messages: [
          { role: 'user', content: 'Hi' },
          { role: 'system', content: [{ type: 'text', text: 'Now in French.' }] },
          { role: 'assistant', content: 'Salut.' },
          { role: 'system', content: 'Shorter.' },
          { role: 'user', content: 'Encore' },
        ],
      }),
    );
    expect(params.messages).toEqual([
      { role: 'system', content: 'Be brief.\n\nNow in French.\n\nShorter.' },
      { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
      { role: 'assistant', content: 'Salut.' },
      { role: 'user', content: [{ type: 'text', text: 'Encore' }] },
    ]);
    expect(dropped).toEqual([]);
  });

  it('maps images, parallel tool use and structured output; names what it drops, once each', () => {
    const { params, dropped } = toChatParams(
      request({
        top_k: 5,
        service_tier: 'auto',
        output_config: { effort: 'low', format: { type: 'json_schema', schema: { type: 'object' } } },
        tools: [
          { name: 'a', input_schema: { type: 'object' }, cache_control: { type: 'ephemeral' } },
          { type: 'web_search_20250305', name: 'web_search' },
        ],
        tool_choice: { type: 'any', disable_parallel_tool_use: true },
        messages: [
          {
            role: 'user',
            content: [
              { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } },
              { type: 'document', source: { type: 'text', data: 'x' } },
              { type: 'text', text: 'Look', cache_control: { type: 'ephemeral' } },
            ],
          },
        ],
      }),
    );
    expect(params).toMatchObject({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
            { type: 'text', text: 'Look' },
          ],
        },
      ],
      tool_choice: 'required',
      parallel_tool_calls: false,
      response_format: { type: 'json_schema', json_schema: { name: 'output', schema: { type: 'object' } } },
    });
    expect(params.tools).toHaveLength(1);
    expect(dropped).toEqual([
      'top_k',
      'service_tier',
      'messages.content.document',
      'cache_control',
      'tools.web_search_20250305',
      'output_config.effort',
    ]);
  });

  it('names only header-safe field names', () => {
    const { dropped } = toChatParams(request({ 'bad name\r\nx-evil': 1, ok_field: 2 }));
    expect(dropped).toEqual(['ok_field']);
  });
});
