import { PROVIDER_LABELS, PROVIDERS, type Provider } from '@platform/contract';
import type { GatewayEnv } from '../../env';

/** How the gateway talks to a provider: which client in this folder calls it. */
export type ApiStyle = 'openai-compatible' | 'anthropic' | 'elevenlabs';

/** What a provider can serve: chat lanes, or one of the media endpoints. */
export type Capability = 'chat' | 'embeddings' | 'image' | 'tts' | 'music' | 'soundfx';

export type ProviderEntry = {
  /** Public API base URL; the lanes config or AI_PROVIDER_BASE_URLS may override it. */
  defaultBaseUrl: string;
  /** The environment variable holding the gateway's own key for it. */
  keyEnv: keyof GatewayEnv & `${string}_API_KEY`;
  api: ApiStyle;
  capabilities: readonly Capability[];
  /** Its chat continues a trailing assistant message (prefill); a target's `accepts_prefill` overrides it. */
  prefill: boolean;
  /** It serves OpenAI's Responses API (`POST /responses`): /v1/responses requests go to it as sent. */
  responses?: boolean;
};

const OPENAI_COMPATIBLE: readonly Capability[] = ['chat', 'image', 'tts'];
/** OpenAI-compatible providers that also serve `POST /embeddings`. */
const WITH_EMBEDDINGS: readonly Capability[] = [...OPENAI_COMPATIBLE, 'embeddings'];

/**
 * The provider catalogue: one row per provider the contract names
 * (`PROVIDERS` in @platform/contract), so adding one is a row here plus its
 * name there; the compiler refuses one without the other. Lanes validation,
 * the registry (base URLs, server keys) and bring-your-own-key read it.
 */
export const PROVIDER_CATALOG: Readonly<Record<Provider, ProviderEntry>> = {
  openrouter: {
    prefill: true,
    defaultBaseUrl: 'https://openrouter.ai/api/v1',
    keyEnv: 'OPENROUTER_API_KEY',
    api: 'openai-compatible',
    capabilities: WITH_EMBEDDINGS,
  },
  groq: {
    prefill: true,
    defaultBaseUrl: 'https://api.groq.com/openai/v1',
    keyEnv: 'GROQ_API_KEY',
    api: 'openai-compatible',
    capabilities: OPENAI_COMPATIBLE,
  },
  cerebras: {
    prefill: false,
    defaultBaseUrl: 'https://api.cerebras.ai/v1',
    keyEnv: 'CEREBRAS_API_KEY',
    api: 'openai-compatible',
    capabilities: OPENAI_COMPATIBLE,
  },
  google: {
    prefill: false,
    defaultBaseUrl: 'https://generativelanguage.googleapis.com/v1beta/openai',
    keyEnv: 'GOOGLE_API_KEY',
    api: 'openai-compatible',
    capabilities: WITH_EMBEDDINGS,
  },
  openai: {
    prefill: false,
    responses: true,
    defaultBaseUrl: 'https://api.openai.com/v1',
    keyEnv: 'OPENAI_API_KEY',
    api: 'openai-compatible',
    capabilities: WITH_EMBEDDINGS,
  },
  anthropic: {
    // Anthropic prefills natively, but a passed-through request ignores the chat prefill.
    prefill: false,
    defaultBaseUrl: 'https://api.anthropic.com/v1',
    keyEnv: 'ANTHROPIC_API_KEY',
    // Its Messages API (providers/anthropic.ts), with prompt caching and thinking.
    api: 'anthropic',
    capabilities: ['chat'],
  },
  elevenlabs: {
    prefill: false,
    defaultBaseUrl: 'https://api.elevenlabs.io',
    keyEnv: 'ELEVENLABS_API_KEY',
    api: 'elevenlabs',
    capabilities: ['music', 'soundfx'],
  },
};

/** Whether `provider` is one of the built-in rows. */
export function isBuiltIn(provider: string): provider is Provider {
  return Object.hasOwn(PROVIDER_CATALOG, provider);
}

/** Whether the built-in `provider` can serve `capability` (lanes validation). */
export function canServe(provider: string, capability: Capability): boolean {
  return isBuiltIn(provider)
    ? PROVIDER_CATALOG[provider].capabilities.includes(capability)
    : capability === 'chat';
}

/**
 * A provider added by the lanes config alone (`providers.<name>` with
 * `base_url` and `key_env`): an OpenAI-compatible chat API, e.g. Together,
 * Fireworks, DeepSeek, Mistral, or a vLLM or Ollama server of one's own.
 */
export type ConfiguredProvider = {
  base_url?: string;
  key_env?: string;
  label?: string;
  accepts_prefill?: boolean;
};

/** One provider as the running gateway knows it, built-in or configured. */
export type CatalogEntry = {
  name: string;
  label: string;
  defaultBaseUrl: string;
  /** The variable holding the gateway's own key (a built-in's fixed one, or the config's `key_env`). */
  keyEnv: string;
  api: ApiStyle;
  capabilities: readonly Capability[];
  prefill: boolean;
  /** Serves OpenAI's Responses API (built-in rows only). */
  responses: boolean;
  builtIn: boolean;
};

/** The built-in providers plus those the lanes config adds: every name lanes, BYOK and the console accept. */
export type ProviderCatalog = {
  /** Every provider name, built-in ones first, in a fixed order. */
  readonly names: readonly string[];
  get(name: string): CatalogEntry | undefined;
};

export function createProviderCatalog(
  configured: Readonly<Record<string, ConfiguredProvider | undefined>>,
): ProviderCatalog {
  const entries = new Map<string, CatalogEntry>();
  for (const name of PROVIDERS) {
    const row = PROVIDER_CATALOG[name];
    const extra = configured[name];
    entries.set(name, {
      name,
      label: extra?.label ?? PROVIDER_LABELS[name],
      defaultBaseUrl: row.defaultBaseUrl,
      keyEnv: row.keyEnv,
      api: row.api,
      capabilities: row.capabilities,
      prefill: extra?.accepts_prefill ?? row.prefill,
      responses: row.responses === true,
      builtIn: true,
    });
  }
  for (const [name, extra] of Object.entries(configured)) {
    if (entries.has(name) || !extra?.base_url || !extra.key_env) continue;
    entries.set(name, {
      name,
      label: extra.label ?? name,
      defaultBaseUrl: extra.base_url,
      keyEnv: extra.key_env,
      api: 'openai-compatible',
      capabilities: ['chat'],
      prefill: extra.accepts_prefill ?? false,
      responses: false,
      builtIn: false,
    });
  }
  const names = [...entries.keys()];
  return { names, get: (name) => entries.get(name) };
}
