/**
 * Every upstream provider the gateway knows, by name: the one list. The
 * gateway's catalogue (apps/gateway/src/ai/providers/catalog.ts) has one row
 * per name, bring-your-own-key accepts exactly these, and the console lists
 * them. Plain values, no zod, so the console can import them without the rest
 * of the contract (`@platform/contract/providers`).
 */
export const PROVIDERS = [
  'openai',
  'openrouter',
  'groq',
  'cerebras',
  'google',
  'anthropic',
  'elevenlabs',
] as const;
export type Provider = (typeof PROVIDERS)[number];

/** How a provider is shown to people (the console's key list). */
export const PROVIDER_LABELS: Readonly<Record<Provider, string>> = {
  openai: 'OpenAI',
  openrouter: 'OpenRouter',
  groq: 'Groq',
  cerebras: 'Cerebras',
  google: 'Google (Gemini)',
  anthropic: 'Anthropic',
  elevenlabs: 'ElevenLabs',
};
