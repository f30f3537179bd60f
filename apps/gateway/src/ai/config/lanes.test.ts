import { DEFAULT_LANES_CONFIG } from './default-lanes';
import { isRouterModel, LanesConfigError, parseLanesConfig, selectTargets } from './lanes';

const LANES = ['free', 'standard', 'premium'];

function withFreeTargets(targets: { provider: string; model: string }[]) {
  const config = structuredClone(DEFAULT_LANES_CONFIG) as unknown as {
    lanes: Record<string, { default_model: string; targets: unknown[] }>;
  };
  config.lanes.free = { default_model: targets[0]?.model ?? '', targets };
  return config;
}

describe('lanes config', () => {
  it('accepts the built-in default with three free targets', () => {
    const config = parseLanesConfig(DEFAULT_LANES_CONFIG, LANES, 'default');
    expect(config.lanes.free?.targets).toHaveLength(3);
  });

  it('retries once by default; lanes may set retries, first-token and idle limits, targets prefill', () => {
    expect(parseLanesConfig(DEFAULT_LANES_CONFIG, LANES, 'default').retry).toEqual({
      max_retries: 1,
      backoff_ms: 200,
      retry_after_max_ms: 5000,
    });
    const config = structuredClone(DEFAULT_LANES_CONFIG) as unknown as {
      retry?: object;
      lanes: Record<string, Record<string, unknown> & { targets: Array<Record<string, unknown>> }>;
    };
    config.retry = { max_retries: 0 };
    const standard = config.lanes.standard;
    if (!standard) throw new Error('no standard lane');
    Object.assign(standard, {
      first_token_timeout_ms: 2000,
      stream_idle_timeout_ms: 5000,
      retry: { max_retries: 2, retry_after_max_ms: 1000 },
    });
    standard.targets[1] = { ...standard.targets[1], accepts_prefill: true };
    const parsed = parseLanesConfig(config, LANES, 'test');
    expect(parsed.retry).toEqual({ max_retries: 0, backoff_ms: 200, retry_after_max_ms: 5000 });
    expect(parsed.lanes.standard).toMatchObject({
      first_token_timeout_ms: 2000,
      stream_idle_timeout_ms: 5000,
      retry: { max_retries: 2, backoff_ms: 200, retry_after_max_ms: 1000 },
    });
    expect(parsed.lanes.standard?.targets[1]?.accepts_prefill).toBe(true);
    config.retry = { max_retries: 4 };
    expect(() => parseLanesConfig(config, LANES, 'test')).toThrow(/retry\.max_retries/);
  });

  it.each([
    ['openrouter', 'openrouter/auto'],
    ['openrouter', 'openrouter/free'],
    ['openrouter', 'meta-llama/auto'],
    ['groq', 'auto'],
  ])('refuses the router model %s %s in the free lane', (provider, model) => {
    const config = withFreeTargets([
      { provider: 'groq', model: 'llama-3.3-70b-versatile' },
      { provider, model },
      { provider: 'google', model: 'gemini-2.5-flash' },
    ]);
    expect(() => parseLanesConfig(config, LANES, 'test')).toThrow(
      /router model .* not allowed in the free lane/,
    );
  });

  it('refuses a free lane without exactly three targets', () => {
    const config = withFreeTargets([{ provider: 'groq', model: 'llama-3.3-70b-versatile' }]);
    expect(() => parseLanesConfig(config, LANES, 'test')).toThrow(/exactly 3 verified free targets/);
  });

  it('refuses an allowed lane that is not configured', () => {
    expect(() => parseLanesConfig(DEFAULT_LANES_CONFIG, [...LANES, 'turbo'], 'test')).toThrow(
      LanesConfigError,
    );
  });

  it('refuses a default model that is not the first target', () => {
    const config = withFreeTargets([
      { provider: 'groq', model: 'a' },
      { provider: 'cerebras', model: 'b' },
      { provider: 'google', model: 'c' },
    ]);
    (config.lanes.free as { default_model: string }).default_model = 'b';
    expect(() => parseLanesConfig(config, LANES, 'test')).toThrow(/must be the model of the first target/);
  });

  it('knows router models by provider and name', () => {
    expect(isRouterModel({ provider: 'openrouter', model: 'openrouter/auto' })).toBe(true);
    expect(isRouterModel({ provider: 'groq', model: 'llama-3.3-70b-versatile' })).toBe(false);
  });

  it('selects the whole chain without a model and only matching targets with one', () => {
    const targets = [
      { provider: 'openai', model: 'm1' },
      { provider: 'openrouter', model: 'm2' },
    ] as const;
    expect(selectTargets(targets, undefined)).toEqual(targets);
    expect(selectTargets(targets, 'm2')).toEqual([targets[1]]);
    expect(selectTargets(targets, 'nope')).toBeNull();
  });
});
