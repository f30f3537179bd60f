import { type AnthropicFake, type OpenAIFake, startAnthropicFake, startOpenAIFake } from '@platform/testing';
import { createProviderCatalog } from './catalog';
import { createProviderRegistry, type ProviderRegistry, parseBaseUrlOverrides } from './registry';

// Which key and base URL a target gets, and which client speaks to it: the
// registry against two fake upstreams (OpenAI-compatible and Anthropic).

const catalog = createProviderCatalog({
  together: { base_url: 'https://api.together.xyz/v1/', key_env: 'TOGETHER_API_KEY' },
});

function registryWith(overrides: Record<string, string> = {}): ProviderRegistry {
  return createProviderRegistry({
    catalog,
    configuredBaseUrls: { together: 'https://api.together.xyz/v1/', groq: 'https://configured.groq/v1' },
    serverKeys: { groq: 'gsk-server', anthropic: 'sk-ant-server', together: 'tok-server' },
    baseUrlOverrides: overrides,
  });
}

describe('provider registry: credentials', () => {
  it("the caller's stored key wins over the server's, and is marked BYOK", () => {
    const registry = registryWith();
    expect(registry.credential('groq', undefined)).toEqual(
      expect.objectContaining({ id: 'groq:server', apiKey: 'gsk-server', byok: false }),
    );
    const own = registry.credential('groq', 'gsk-mine');
    expect(own).toEqual(expect.objectContaining({ provider: 'groq', apiKey: 'gsk-mine', byok: true }));
  });

  it('a BYOK credential id names provider and a hash of the key, never the key, and is stable', () => {
    const registry = registryWith();
    const id = registry.credential('groq', 'gsk-secret-value')?.id ?? '';
    expect(id).toMatch(/^groq:byok:[A-Za-z0-9_-]{43}$/);
    expect(id).not.toContain('gsk-secret-value');
    expect(registry.credential('groq', 'gsk-secret-value')?.id).toBe(id);
    expect(registry.credential('groq', 'gsk-other')?.id).not.toBe(id);
    // The same key at another provider is another credential.
    expect(registry.credential('cerebras', 'gsk-secret-value')?.id).not.toBe(id);
  });

  it('no stored key and no server key, or an unknown provider: no credential', () => {
    const registry = registryWith();
    expect(registry.credential('cerebras', undefined)).toBeNull();
    expect(registry.credential('nowhere', 'k')).toBeNull();
  });

  it('base URL: the env override, else the config, else the catalogue default; no trailing slash', () => {
    const registry = registryWith({ groq: 'http://127.0.0.1:9/v1//' });
    expect(registry.credential('groq', undefined)?.baseUrl).toBe('http://127.0.0.1:9/v1');
    expect(registryWith().credential('groq', undefined)?.baseUrl).toBe('https://configured.groq/v1');
    expect(registryWith().credential('anthropic', undefined)?.baseUrl).toBe('https://api.anthropic.com/v1');
    expect(registryWith().credential('together', undefined)?.baseUrl).toBe('https://api.together.xyz/v1');
  });

  it('parseBaseUrlOverrides reads name=url pairs and ignores entries without a name', () => {
    expect(parseBaseUrlOverrides(['groq = http://a/v1', 'openai=http://b?x=1', '=http://c', 'junk'])).toEqual(
      {
        groq: 'http://a/v1',
        openai: 'http://b?x=1',
      },
    );
  });
});

describe('provider registry: clients', () => {
  let openai: OpenAIFake;
  let anthropic: AnthropicFake;
  let registry: ProviderRegistry;

  beforeAll(async () => {
    [openai, anthropic] = await Promise.all([startOpenAIFake(), startAnthropicFake()]);
    registry = registryWith({ groq: openai.baseURL, together: openai.baseURL, anthropic: anthropic.apiBase });
  });
  afterAll(async () => {
    for (const provider of ['groq', 'together', 'anthropic']) {
      const credential = registry.credential(provider, undefined);
      if (credential) await registry.chat(credential).close();
    }
    await Promise.all([openai.close(), anthropic.close()]);
  });

  const request = { model: 'm', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] };
  const open = new AbortController().signal;

  it("an OpenAI-compatible provider's chat goes to {base}/chat/completions with its Bearer key", async () => {
    const credential = registry.credential('together', undefined);
    if (!credential) throw new Error('no credential');
    await registry.chat(credential).complete(request, open);
    const seen = openai.requests.at(-1);
    expect(seen?.path).toBe('/v1/chat/completions');
    expect(seen?.headers.authorization).toBe('Bearer tok-server');
  });

  it("the catalogue's Anthropic row gets the Messages client, with x-api-key", async () => {
    const credential = registry.credential('anthropic', undefined);
    if (!credential) throw new Error('no credential');
    await registry.chat(credential).complete(request, open);
    const seen = anthropic.requests.at(-1);
    expect(seen?.path).toBe('/v1/messages');
    expect(seen?.headers['x-api-key']).toBe('sk-ant-server');
  });

  it('one client per credential: the same object for the same key, another for another key', () => {
    const server = registry.credential('groq', undefined);
    const own = registry.credential('groq', 'gsk-mine');
    if (!server || !own) throw new Error('no credential');
    expect(registry.chat(server)).toBe(registry.chat(registry.credential('groq', undefined) ?? server));
    expect(registry.chat(own)).not.toBe(registry.chat(server));
    expect(registry.client(server)).toBe(registry.client(server));
    expect(registry.client(own)).not.toBe(registry.client(server));
  });
});
