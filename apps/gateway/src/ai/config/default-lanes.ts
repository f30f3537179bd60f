/**
 * The built-in lanes config, used when AI_LANES_CONFIG is unset. It goes
 * through the same validation as a file. The free lane lists the three free
 * models we verified, in the order we prefer them: Groq first (fastest), then
 * Cerebras, then Google's free Gemini tier. OpenRouter's routers are left out
 * on purpose: they pick arbitrary models per request.
 */
export const DEFAULT_LANES_CONFIG = {
  providers: {},
  lanes: {
    free: {
      default_model: 'llama-3.3-70b-versatile',
      targets: [
        { provider: 'groq', model: 'llama-3.3-70b-versatile' },
        { provider: 'cerebras', model: 'gpt-oss-120b' },
        { provider: 'google', model: 'gemini-2.5-flash' },
      ],
    },
    standard: {
      default_model: 'gpt-4o-mini',
      targets: [
        { provider: 'openai', model: 'gpt-4o-mini' },
        { provider: 'openrouter', model: 'openai/gpt-4o-mini' },
      ],
    },
    premium: {
      default_model: 'gpt-4.1',
      targets: [
        { provider: 'openai', model: 'gpt-4.1' },
        { provider: 'openrouter', model: 'openai/gpt-4.1' },
      ],
    },
  },
  media: {
    image: [{ provider: 'openai', model: 'dall-e-3' }],
    tts: [{ provider: 'openai', model: 'gpt-4o-mini-tts' }],
    music: [{ provider: 'elevenlabs', model: 'music_v1' }],
    soundfx: [{ provider: 'elevenlabs', model: 'eleven_text_to_sound_v2' }],
  },
} as const;
