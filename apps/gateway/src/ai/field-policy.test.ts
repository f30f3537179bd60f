import type { UpstreamChatParams } from './chat-request';
import type { Target } from './config/lanes';
import { chatParamsFor, shownDroppedParams } from './field-policy';
import { createProviderCatalog } from './providers/catalog';

// What each target is sent of a chat request, and which fields are named as dropped.

const rt = {
  config: { providers: { groq: { unsupported_params: ['seed', 'logit_bias'] } } },
  catalog: createProviderCatalog({}),
} as unknown as Parameters<typeof chatParamsFor>[0];

const groq: Target = { provider: 'groq', model: 'llama' };
const openai: Target = { provider: 'openai', model: 'gpt' };
const reasoning: Target = { provider: 'openai', model: 'o3', reasoning_model: true } as Target;
const claude: Target = { provider: 'anthropic', model: 'claude' };

const params = (more: object) =>
  ({ model: 'm', messages: [{ role: 'user', content: 'hi' }], ...more }) as unknown as UpstreamChatParams;

describe('chatParamsFor', () => {
  it('an OpenAI-protocol target gets the params as they are when nothing is refused', () => {
    const sent = params({ temperature: 0.2 });
    expect(chatParamsFor(rt, sent, openai)).toEqual({ params: sent, dropped: [] });
  });

  it('fields the provider is configured to refuse are left out and named, when the client set them', () => {
    const { params: out, dropped } = chatParamsFor(rt, params({ seed: 7, temperature: 1 }), groq);
    expect(dropped).toEqual(['seed']);
    expect(out).not.toHaveProperty('seed');
    expect(out).toHaveProperty('temperature', 1);
  });

  it('a reasoning model gets the limit as max_completion_tokens, the lower of the two', () => {
    expect(chatParamsFor(rt, params({ max_tokens: 100 }), reasoning).params).toEqual(
      params({ max_completion_tokens: 100 }),
    );
    expect(chatParamsFor(rt, params({ max_tokens: 100, max_completion_tokens: 50 }), openai).params).toEqual(
      params({ max_completion_tokens: 50 }),
    );
    expect(chatParamsFor(rt, params({ max_tokens: 100 }), openai).params).toEqual(
      params({ max_tokens: 100 }),
    );
  });

  it('translated params: reasoning_effort only to reasoning models, OpenAI-only fields only to openai', () => {
    const sent = params({ reasoning_effort: 'high', prompt_cache_key: 'k', service_tier: 'auto' });
    const toGroq = chatParamsFor(rt, sent, groq, { translated: true });
    expect(toGroq.dropped).toEqual(['reasoning_effort', 'prompt_cache_key', 'service_tier']);
    expect(toGroq.params).not.toHaveProperty('prompt_cache_key');
    const toReasoning = chatParamsFor(rt, sent, reasoning, { translated: true });
    expect(toReasoning.dropped).toEqual([]);
    // Sent as the client chose them when not translated.
    expect(chatParamsFor(rt, sent, groq).dropped).toEqual([]);
  });

  it('an Anthropic target keeps the params for its translation and names what it cannot carry', () => {
    const sent = params({ logprobs: true, temperature: 0.5 });
    const out = chatParamsFor(rt, sent, claude);
    expect(out.params).toBe(sent);
    expect(out.dropped).toContain('logprobs');
    expect(out.dropped).not.toContain('temperature');
  });
});

describe('shownDroppedParams', () => {
  it('shows plain names only, at most 32, then ...', () => {
    expect(shownDroppedParams(['seed', 'bad name', 'x'.repeat(65), 'a.b-c_d'])).toEqual(['seed', 'a.b-c_d']);
    const many = Array.from({ length: 40 }, (_, i) => `f${i}`);
    const shown = shownDroppedParams(many);
    expect(shown).toHaveLength(33);
    expect(shown.at(-1)).toBe('...');
  });
});
