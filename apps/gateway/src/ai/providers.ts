import { createHash } from 'node:crypto';
import OpenAI from 'openai';
import { type ChatUpstream, createChatUpstream } from './chat-upstream';
import { type LanesConfig, UPSTREAM_PROVIDERS, type UpstreamProvider } from './lanes';

/** Public API base URL of each provider; the lanes config or AI_PROVIDER_BASE_URLS may override it. */
export const DEFAULT_BASE_URLS: Readonly<Record<UpstreamProvider, string>> = Object.freeze({
  openrouter: 'https://openrouter.ai/api/v1',
  groq: 'https://api.groq.com/openai/v1',
  cerebras: 'https://api.cerebras.ai/v1',
  google: 'https://generativelanguage.googleapis.com/v1beta/openai',
  openai: 'https://api.openai.com/v1',
  elevenlabs: 'https://api.elevenlabs.io',
});

/** The provider keys of the gateway itself, read from the environment by the caller. */
export type ServerProviderKeys = Partial<Record<UpstreamProvider, string>>;

/** A credential for one provider: the gateway's own key or the caller's stored key. */
export type ProviderCredential = {
  /**
   * Names the provider and key without the plaintext: `<provider>:server`, or
   * `<provider>:byok:<sha256 of the key>`. Keys the registry's clients and the circuit breaker.
   */
  id: string;
  provider: UpstreamProvider;
  baseUrl: string;
  apiKey: string;
  byok: boolean;
};

/**
 * Resolves base URLs and keys and hands out one OpenAI client per
 * provider+key. Reusing a client reuses its keep-alive connection pool, which
 * is what keeps upstream latency low under load.
 */
export type ProviderRegistry = {
  /** The credential to use: the caller's stored key when present, else the server's, else null. */
  credential(provider: UpstreamProvider, storedKey: string | undefined): ProviderCredential | null;
  /** The SDK client (images, speech). */
  client(credential: ProviderCredential): OpenAI;
  /** The pooled chat client (chat completions and streams), see chat-upstream.ts. */
  chat(credential: ProviderCredential): ChatUpstream;
};

/** Parses `name=url,name=url` (AI_PROVIDER_BASE_URLS). */
export function parseBaseUrlOverrides(entries: readonly string[]): Partial<Record<UpstreamProvider, string>> {
  const out: Partial<Record<string, string>> = {};
  for (const entry of entries) {
    const eq = entry.indexOf('=');
    if (eq > 0) out[entry.slice(0, eq).trim()] = entry.slice(eq + 1).trim();
  }
  return out as Partial<Record<UpstreamProvider, string>>;
}

/** Most clients live for the process; BYOK clients are bounded so a churn of keys cannot grow memory. */
const MAX_CACHED_CLIENTS = 1000;

export function createProviderRegistry(opts: {
  config: LanesConfig;
  serverKeys: ServerProviderKeys;
  /** Env overrides win over the config file, so tests and operators can redirect one provider. */
  baseUrlOverrides?: Partial<Record<UpstreamProvider, string>>;
}): ProviderRegistry {
  const clients = new Map<string, OpenAI>();
  const chatClients = new Map<string, ChatUpstream>();
  // Resolved once: credential() runs for every target of every request.
  const baseUrls = Object.fromEntries(
    UPSTREAM_PROVIDERS.map((provider) => [
      provider,
      (
        opts.baseUrlOverrides?.[provider] ??
        opts.config.providers[provider]?.base_url ??
        DEFAULT_BASE_URLS[provider]
      ).replace(/\/+$/, ''),
    ]),
  ) as Record<UpstreamProvider, string>;
  /** Stored key -> its credential id, so a BYOK key is hashed once, not per target and request. */
  const byokIds = new Map<string, string>();
  const byokId = (provider: UpstreamProvider, apiKey: string): string => {
    const cacheKey = `${provider}:${apiKey}`;
    let id = byokIds.get(cacheKey);
    if (id === undefined) {
      id = `${provider}:byok:${createHash('sha256').update(apiKey).digest('base64url')}`;
      if (byokIds.size >= MAX_CACHED_CLIENTS) byokIds.clear();
      byokIds.set(cacheKey, id);
    }
    return id;
  };

  return {
    credential(provider, storedKey) {
      const apiKey = storedKey ?? opts.serverKeys[provider];
      if (!apiKey) return null;
      const byok = storedKey !== undefined;
      // The server's own key is fixed per provider for the process: no hash for it.
      const id = byok ? byokId(provider, apiKey) : `${provider}:server`;
      return { id, provider, baseUrl: baseUrls[provider], apiKey, byok };
    },
    client(credential) {
      const id = credential.id;
      const cached = clients.get(id);
      if (cached) return cached;
      if (clients.size >= MAX_CACHED_CLIENTS) {
        const oldest = clients.keys().next().value;
        if (oldest !== undefined) clients.delete(oldest);
      }
      const client = new OpenAI({
        apiKey: credential.apiKey,
        baseURL: credential.baseUrl,
        // Fallback to the next target is our retry; the SDK's own retries would
        // multiply the time a caller waits on a dead provider.
        maxRetries: 0,
        // Our per-attempt AbortController enforces AI_UPSTREAM_TIMEOUT_MS; this is only a backstop.
        timeout: 10 * 60_000,
        logLevel: 'off',
      });
      clients.set(id, client);
      return client;
    },
    chat(credential) {
      const id = credential.id;
      const cached = chatClients.get(id);
      if (cached) return cached;
      if (chatClients.size >= MAX_CACHED_CLIENTS) {
        const oldest = chatClients.entries().next().value;
        if (oldest) {
          chatClients.delete(oldest[0]);
          // In-flight requests finish; the pool's sockets close afterwards.
          void oldest[1].close().catch(() => {});
        }
      }
      const client = createChatUpstream(credential.baseUrl, credential.apiKey);
      chatClients.set(id, client);
      return client;
    },
  };
}
