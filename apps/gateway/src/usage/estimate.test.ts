import { CHAT_LIMITS } from '@platform/contract';
import { loadGatewayEnv } from '../env';
import {
  estimateChatPrompt,
  estimatePromptTokens,
  estimateTexts,
  IMAGE_TOKENS,
  type PromptSource,
} from './estimate';

const SECRET = { GATEWAY_SECRET: 'estimate-test-secret-0123456789abcdef' };

describe('prompt estimate', () => {
  it('counts tools, tool calls and results, system parts and images, not only message text', () => {
    const text = estimatePromptTokens([{ content: 'hi' }]);
    const tools = [
      { type: 'function', function: { name: 'search', description: 'find things in the web index' } },
    ];
    expect(estimatePromptTokens([{ content: 'hi' }], tools)).toBeGreaterThan(text + 5);
    const call = [
      { id: 'c1', type: 'function', function: { name: 'search', arguments: '{"q":"weather in Paris"}' } },
    ];
    expect(estimatePromptTokens([{ content: 'hi' }, { content: null, tool_calls: call }])).toBeGreaterThan(
      text + 8,
    );
    expect(
      estimatePromptTokens([{ content: [{ type: 'text', text: 'a long system prompt here' }] }]),
    ).toBeGreaterThan(text);
    const image = { type: 'image_url', image_url: { url: `data:image/png;base64,${'A'.repeat(100_000)}` } };
    expect(estimatePromptTokens([{ content: [{ type: 'text', text: 'hi' }, image] }])).toBe(
      text + IMAGE_TOKENS,
    );
  });

  it('a passed-through Anthropic body counts its system blocks, tool_use and tool_result blocks and tools', () => {
    const chat = {
      params: { messages: [] },
      native: {
        body: {
          system: [
            { type: 'text', text: 'You are a careful assistant.', cache_control: { type: 'ephemeral' } },
          ],
          messages: [
            {
              role: 'assistant',
              content: [{ type: 'tool_use', id: 't1', name: 'read', input: { path: '/etc/x' } }],
            },
            {
              role: 'user',
              content: [{ type: 'tool_result', tool_use_id: 't1', content: 'file contents here' }],
            },
          ],
          tools: [{ name: 'read', input_schema: { type: 'object' } }],
        },
      },
    };
    expect(estimateChatPrompt(chat)).toBeGreaterThan(20);
  });

  it('a chat asked twice gets the same number, short or long, also after its params are copied', () => {
    for (const content of ['Say hello.', 'word '.repeat(2_000)]) {
      const messages = [{ role: 'user', content }];
      const chat: PromptSource = { params: { messages } };
      const first = estimateChatPrompt(chat);
      expect(first).toBe(estimatePromptTokens(messages));
      // As capCompletion does: new params, the same messages.
      chat.params = { ...chat.params };
      expect(estimateChatPrompt(chat)).toBe(first);
      expect(estimateChatPrompt({ params: { messages: [...messages] } })).toBe(first);
    }
  });

  it('embeddings inputs are counted', () => {
    expect(estimateTexts(['one two three', 'four five'])).toBeGreaterThanOrEqual(5);
  });

  it('the default daily budget holds the largest request the spec allows (8 MiB, max_tokens at its ceiling)', () => {
    // Characters tokenize to at most one token each; ASCII makes the most characters of 8 MiB.
    const content = 'x'.repeat(CHAT_LIMITS.maxMessageBytes);
    const messages = Array.from({ length: CHAT_LIMITS.maxMessages }, () => ({ content }));
    const worst = estimatePromptTokens(messages) + CHAT_LIMITS.maxMaxTokens;
    expect(worst).toBeLessThanOrEqual(loadGatewayEnv(SECRET).AI_DAILY_TOKEN_BUDGET);
  });
});
