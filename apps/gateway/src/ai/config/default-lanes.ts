/**
 * The built-in lanes config, used when AI_LANES_CONFIG is unset. It goes
 * through the same validation as a file. The free lane lists the three free
 * models we verified, in the order we prefer them: Groq first (fastest), then
 * Cerebras, then Google's free Gemini tier. OpenRouter's routers are left out
 * on purpose: they pick arbitrary models per request.
 *
 * Every lane states where its usage goes (docs/billing.md, "Where usage
 * goes"): `metered` ships it to payment for every user (usage of a user
 * without a billable subscription is held there, never invoiced), `paid` also
 * admits only users whose subscription carries a price on the lane's meter,
 * `free` ships nothing.
 */
export const DEFAULT_LANES_CONFIG = {
  providers: {},
  lanes: {
    free: {
      billing: { mode: 'metered' },
      default_model: 'llama-3.3-70b-versatile',
      targets: [
        { provider: 'groq', model: 'llama-3.3-70b-versatile' },
        { provider: 'cerebras', model: 'gpt-oss-120b' },
        { provider: 'google', model: 'gemini-2.5-flash' },
      ],
    },
    standard: {
      billing: { mode: 'metered' },
      default_model: 'gpt-4o-mini',
      targets: [
        { provider: 'openai', model: 'gpt-4o-mini' },
        { provider: 'openrouter', model: 'openai/gpt-4o-mini' },
      ],
    },
    premium: {
      billing: { mode: 'metered' },
      default_model: 'gpt-4.1',
      targets: [
        { provider: 'openai', model: 'gpt-4.1' },
        { provider: 'openrouter', model: 'openai/gpt-4.1' },
      ],
    },
  },
  media_billing: { mode: 'metered' },
  media: {
    image: [{ provider: 'openai', model: 'dall-e-3' }],
    tts: [{ provider: 'openai', model: 'gpt-4o-mini-tts' }],
    music: [{ provider: 'elevenlabs', model: 'music_v1' }],
    soundfx: [{ provider: 'elevenlabs', model: 'eleven_text_to_sound_v2' }],
  },
} as const;
