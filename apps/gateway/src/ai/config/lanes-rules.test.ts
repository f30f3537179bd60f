import { DEFAULT_LANES_CONFIG } from './default-lanes';
import { LanesConfigError, parseLanesConfig } from './lanes';

// The lanes config's rules across sections, one case each: every refusal
// names its path, so an operator can fix the file from the message.

type Config = {
  providers: Record<string, Record<string, unknown>>;
  lanes: Record<
    string,
    { default_model: string; targets: Array<Record<string, unknown>> } & Record<string, unknown>
  >;
  media: Record<string, Array<Record<string, unknown>>>;
};

function edited(change: (c: Config) => void): Config {
  const config = structuredClone(DEFAULT_LANES_CONFIG) as unknown as Config;
  change(config);
  return config;
}

/** The problems parseLanesConfig lists for a config (empty: accepted). */
function problemsOf(config: Config): string[] {
  try {
    parseLanesConfig(config, ['free'], 'test');
    return [];
  } catch (err) {
    if (!(err instanceof LanesConfigError)) throw err;
    return err.message
      .split('\n')
      .slice(1)
      .map((l) => l.replace(/^\s+- /, ''));
  }
}

describe('lanes config rules', () => {
  it('a target of a provider nobody configured is refused, saying how to add it', () => {
    const problems = problemsOf(
      edited((c) => {
        c.lanes.standard?.targets.push({ provider: 'together', model: 'm' });
      }),
    );
    expect(problems).toEqual([
      'lanes.standard.targets.2.provider: unknown provider together: add it under providers with base_url and key_env',
    ]);
  });

  it('a configured provider needs base_url and key_env; then its targets are accepted', () => {
    expect(
      problemsOf(
        edited((c) => {
          c.providers.together = { base_url: 'https://api.together.xyz/v1' };
        }),
      ),
    ).toEqual(['providers.together.key_env: required for a provider that is not built in']);
    expect(
      problemsOf(
        edited((c) => {
          c.providers.together = { base_url: 'https://api.together.xyz/v1', key_env: 'TOGETHER_API_KEY' };
          c.lanes.standard?.targets.push({ provider: 'together', model: 'm' });
        }),
      ),
    ).toEqual([]);
  });

  it("a built-in provider's key variable is fixed", () => {
    expect(
      problemsOf(
        edited((c) => {
          c.providers.groq = { key_env: 'MY_GROQ_API_KEY' };
        }),
      ),
    ).toEqual(['providers.groq.key_env: groq is built in; its key variable is fixed']);
  });

  it('a chat target needs a chat API, an embeddings target an embeddings API', () => {
    expect(
      problemsOf(
        edited((c) => {
          c.lanes.standard?.targets.push({ provider: 'elevenlabs', model: 'm' });
          Object.assign(c.lanes.standard ?? {}, { embedding_targets: [{ provider: 'groq', model: 'e' }] });
        }),
      ),
    ).toEqual([
      'lanes.standard.targets.2.provider: elevenlabs has no chat API',
      'lanes.standard.embedding_targets.0.provider: groq has no embeddings API',
    ]);
  });

  it('music and sound effects come from elevenlabs only; images need an OpenAI-compatible provider', () => {
    expect(
      problemsOf(
        edited((c) => {
          c.media.music = [{ provider: 'openai', model: 'm' }];
          c.media.image = [{ provider: 'elevenlabs', model: 'i' }];
        }),
      ),
    ).toEqual([
      'media.image.0: needs an OpenAI-compatible provider',
      'media.music.0: only elevenlabs is supported',
    ]);
  });

  it('the free lane refuses router models and duplicate targets', () => {
    expect(
      problemsOf(
        edited((c) => {
          const free = c.lanes.free;
          if (!free) throw new Error('no free lane');
          free.targets[1] = { provider: 'openrouter', model: 'openrouter/auto' };
          free.targets[2] = { ...free.targets[0] };
        }),
      ),
    ).toEqual([
      'lanes.free.targets.1.model: router model openrouter/auto picks arbitrary models and is not allowed in the free lane',
      'lanes.free.targets.2: duplicate target',
    ]);
  });
});
