import { createHash } from 'node:crypto';
import type OpenAI from 'openai';
import { lruCache } from '../../cache/lru';
import { createAnthropicUpstream } from './anthropic';
import type { ProviderCatalog } from './catalog';
import { type ChatUpstream, createChatUpstream } from './openai-chat';
import { createResponsesUpstream } from './openai-responses';
import { openAiSdk } from './openai-sdk';

/** The provider keys of the gateway itself, read from the environment by the caller. */
export type ServerProviderKeys = Readonly<Record<string, string | undefined>>;

/** A credential for one provider: the gateway's own key or the caller's stored key. */
export type ProviderCredential = {
  /**
   * Names the provider and key without the plaintext: `<provider>:server`, or
   * `<provider>:byok:<sha256 of the key>`. Keys the registry's clients and the circuit breaker.
   */
  id: string;
  /** A name of the provider catalogue (built-in or configured). */
  provider: string;
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
  credential(provider: string, storedKey: string | undefined): ProviderCredential | null;
  /** The SDK client (images, speech). */
  client(credential: ProviderCredential): OpenAI;
  /** The pooled chat client (chat completions and streams), see openai-chat.ts. */
  chat(credential: ProviderCredential): ChatUpstream;
};

/** Parses `name=url,name=url` (AI_PROVIDER_BASE_URLS). */
export function parseBaseUrlOverrides(entries: readonly string[]): Record<string, string> {
  const out: Partial<Record<string, string>> = {};
  for (const entry of entries) {
    const eq = entry.indexOf('=');
    if (eq > 0) out[entry.slice(0, eq).trim()] = entry.slice(eq + 1).trim();
  }
  return out as Record<string, string>;
}

/** Most clients live for the process; BYOK clients are bounded so a churn of keys cannot grow memory. */
const MAX_CACHED_CLIENTS = 1000;

// Over 80 lines: the three methods share the base URLs and the client caches.
export function createProviderRegistry(opts: {
  /** Every provider the gateway knows, built-in or added by the lanes config. */
  catalog: ProviderCatalog;
  /** The lanes config's `providers.<name>.base_url` entries. */
  configuredBaseUrls: Readonly<Record<string, string | undefined>>;
  serverKeys: ServerProviderKeys;
  /** Env overrides win over the config file, so tests and operators can redirect one provider. */
  baseUrlOverrides?: Readonly<Record<string, string>>;
}): ProviderRegistry {
  const clients = lruCache<string, OpenAI>({ max: MAX_CACHED_CLIENTS });
  const chatClients = lruCache<string, ChatUpstream>({
    max: MAX_CACHED_CLIENTS,
    // In-flight requests finish; the pool's sockets close afterwards.
    onEvict: (client) => void client.close().catch(() => {}),
  });
  // Resolved once: credential() runs for every target of every request.
  const baseUrls = new Map(
    opts.catalog.names.map((provider) => [
      provider,
      (
        opts.baseUrlOverrides?.[provider] ??
        opts.configuredBaseUrls[provider] ??
        opts.catalog.get(provider)?.defaultBaseUrl ??
        ''
      ).replace(/\/+$/, ''),
    ]),
  );
  /** Stored key -> its credential id, so a BYOK key is hashed once, not per target and request. */
  const byokIds = lruCache<string, string>({ max: MAX_CACHED_CLIENTS });
  const byokId = (provider: string, apiKey: string): string => {
    const cacheKey = `${provider}:${apiKey}`;
    let id = byokIds.get(cacheKey);
    if (id === undefined) {
      id = `${provider}:byok:${createHash('sha256').update(apiKey).digest('base64url')}`;
      byokIds.set(cacheKey, id);
    }
    return id;
  };

  return {
    credential(provider, storedKey) {
      const apiKey = storedKey ?? opts.serverKeys[provider];
      const baseUrl = baseUrls.get(provider);
      if (!apiKey || baseUrl === undefined) return null;
      const byok = storedKey !== undefined;
      // The server's own key is fixed per provider for the process: no hash for it.
      const id = byok ? byokId(provider, apiKey) : `${provider}:server`;
      return { id, provider, baseUrl, apiKey, byok };
    },
    client(credential) {
      const id = credential.id;
      const cached = clients.get(id);
      if (cached) return cached;
      const SdkClient = openAiSdk();
      const client = new SdkClient({
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
      // The catalogue says which client speaks the provider's API; both give the chat shape.
      const entry = opts.catalog.get(credential.provider);
      const client =
        entry?.api === 'anthropic'
          ? createAnthropicUpstream(credential.baseUrl, credential.apiKey)
          : createChatUpstream(
              credential.baseUrl,
              credential.apiKey,
              entry?.responses ? createResponsesUpstream(credential.baseUrl, credential.apiKey) : undefined,
            );
      chatClients.set(id, client);
      return client;
    },
  };
}
