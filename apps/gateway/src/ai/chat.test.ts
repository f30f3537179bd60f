import type { ChatCompletion } from 'openai/resources/chat/completions';
import {
  cacheTokensOf,
  completionUsage,
  toChatCompletionResponse,
  toChatUsage,
  upstreamChatParams,
} from './chat';
import type { PreparedChat } from './chat-request';
import type { Target } from './config/lanes';
import type { FallbackResult } from './fallback';

// The native chat's plain parts: the body each target is sent, usage as
// charged (reported or estimated), and the native answer shape.

const A: Target = { provider: 'groq', model: 'a' };
const O3 = { provider: 'openai', model: 'o3', reasoning_model: true } as Target;

const prepared = (params: object, more: Partial<PreparedChat> = {}) =>
  ({
    targets: [A],
    lane: 'free',
    projectId: 'p',
    params: { messages: [], ...params },
    ...more,
  }) as PreparedChat;

const result = (completion: object): FallbackResult<ChatCompletion> =>
  ({
    value: completion,
    target: A,
    attempts: 1,
    index: 0,
    latencyMs: 1,
  }) as unknown as FallbackResult<ChatCompletion>;

describe('upstreamChatParams', () => {
  it("sets the target's model, and renames the limit for a reasoning model", () => {
    expect(upstreamChatParams(prepared({ max_tokens: 10 }), A)).toEqual({
      messages: [],
      max_tokens: 10,
      model: 'a',
    });
    expect(upstreamChatParams(prepared({ max_tokens: 10 }), O3)).toEqual({
      messages: [],
      max_completion_tokens: 10,
      model: 'o3',
    });
  });

  it('a request under a field policy is sent as that policy makes it for the target', () => {
    const forTarget = (params: object, target: Target) => ({
      params: { ...params, seen_by: target.provider },
      dropped: [],
    });
    expect(upstreamChatParams(prepared({ temperature: 1 }, { forTarget } as never), A)).toEqual({
      messages: [],
      temperature: 1,
      seen_by: 'groq',
      model: 'a',
    });
  });
});

describe('usage as charged', () => {
  it('toChatUsage fills what the provider left out', () => {
    expect(toChatUsage({ prompt_tokens: 3, completion_tokens: 4 })).toEqual({
      prompt_tokens: 3,
      completion_tokens: 4,
      total_tokens: 7,
    });
    expect(toChatUsage(null)).toEqual({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });
  });

  it('cacheTokensOf reads cache reads and writes, floored, ignoring junk', () => {
    expect(cacheTokensOf({ prompt_tokens_details: { cached_tokens: 4.7, cache_write_tokens: 2 } })).toEqual({
      read: 4,
      write: 2,
    });
    expect(cacheTokensOf({ prompt_tokens_details: { cached_tokens: -1, cache_write_tokens: 'x' } })).toEqual({
      read: 0,
      write: 0,
    });
    expect(cacheTokensOf({})).toBeNull();
  });

  it("the provider's reported usage is charged as reported, with its cached tokens", () => {
    const usage = {
      prompt_tokens: 10,
      completion_tokens: 2,
      total_tokens: 12,
      prompt_tokens_details: { cached_tokens: 3 },
    };
    const out = completionUsage(prepared({}), result({ choices: [{ message: { content: 'hi' } }], usage }));
    expect(out).toEqual(
      expect.objectContaining({
        usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12, cached_tokens: 3 },
        estimated: false,
      }),
    );
  });

  it('without reported usage the prompt and the answer are estimated, and say so', () => {
    const chat = prepared({ messages: [{ role: 'user', content: 'hello there, how are you?' }] });
    const out = completionUsage(
      chat,
      result({ choices: [{ message: { content: 'very well, thank you' } }] }),
    );
    expect(out.estimated).toBe(true);
    expect(out.usage.prompt_tokens).toBeGreaterThan(0);
    expect(out.usage.completion_tokens).toBeGreaterThan(0);
    expect(out.usage.total_tokens).toBe(out.usage.prompt_tokens + out.usage.completion_tokens);
  });

  it('a reported usage of all zeros is no report: estimated too', () => {
    const chat = prepared({ messages: [{ role: 'user', content: 'hello there' }] });
    const zeros = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
    const out = completionUsage(chat, result({ choices: [{ message: { content: 'hi' } }], usage: zeros }));
    expect(out.estimated).toBe(true);
    expect(out.usage.total_tokens).toBeGreaterThan(0);
  });
});

describe('toChatCompletionResponse', () => {
  it("answers with the configured model id, not the provider's alias", () => {
    const response = toChatCompletionResponse(
      result({ model: 'a-2025-01-01', choices: [{ message: { content: 'ok' }, finish_reason: 'length' }] }),
    );
    expect(response).toEqual({
      content: 'ok',
      model_used: 'a',
      finish_reason: 'length',
      usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
    });
  });
});
