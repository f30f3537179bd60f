import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DEFAULT_LANES_CONFIG } from './default-lanes';
import { LanesConfigError, parseLanesConfig } from './lanes';
import { loadServiceLanes, unpricedTargets } from './priced-targets';

const LANES = ['free', 'standard', 'premium'];

function lanesFile(config: unknown): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'gw-prices-')), 'lanes.json');
  writeFileSync(file, JSON.stringify(config));
  return file;
}

/** The built-in config with a self-hosted model added to the standard lane and `prices` as given. */
function withOwnTarget(prices?: Record<string, unknown>) {
  const config = structuredClone(DEFAULT_LANES_CONFIG) as unknown as Record<string, unknown> & {
    lanes: { standard: { targets: unknown[] } };
    providers: Record<string, unknown>;
  };
  config.providers = { vllm: { base_url: 'http://vllm.internal:8000/v1', key_env: 'VLLM_API_KEY' } };
  config.lanes.standard.targets.push({ provider: 'vllm', model: 'llama-70b' });
  return prices ? { ...config, prices } : config;
}

const production = (file: string) => ({
  AI_LANES_CONFIG: file,
  AI_ALLOWED_LANES: LANES,
  NODE_ENV: 'production' as const,
});

describe('nothing unpriced', () => {
  it('the built-in config prices every target it names, media included', () => {
    expect(unpricedTargets(parseLanesConfig(DEFAULT_LANES_CONFIG, LANES, 'default'), Date.now())).toEqual([]);
    expect(() =>
      loadServiceLanes(
        { AI_LANES_CONFIG: undefined, AI_ALLOWED_LANES: LANES, NODE_ENV: 'production' },
        Date.now(),
      ),
    ).not.toThrow();
  });

  it('a production start refuses a lane target without a price, naming it', () => {
    const start = () => loadServiceLanes(production(lanesFile(withOwnTarget())), Date.now());
    expect(start).toThrow(LanesConfigError);
    expect(start).toThrow(/lanes\.standard\.targets\.2: vllm\/llama-70b has no price/);
  });

  it('accepts it priced at 0 explicitly (a self-hosted model)', () => {
    const config = withOwnTarget({ 'vllm/llama-70b': { input: 0, output: 0 } });
    expect(loadServiceLanes(production(lanesFile(config)), Date.now()).lanes.standard?.targets).toHaveLength(
      3,
    );
  });

  it('outside production the same config starts (tests, local runs)', () => {
    const file = lanesFile(withOwnTarget());
    expect(() =>
      loadServiceLanes({ ...production(file), NODE_ENV: 'development' }, Date.now()),
    ).not.toThrow();
  });

  it('refuses media and embedding targets without a price of their kind', () => {
    const config = structuredClone(DEFAULT_LANES_CONFIG) as unknown as Record<string, unknown> & {
      lanes: { standard: Record<string, unknown> };
      media: Record<string, unknown[]>;
    };
    config.media.image = [{ provider: 'openai', model: 'my-image-model' }];
    // A token price does not price seconds of music.
    config.media.music = [{ provider: 'elevenlabs', model: 'music_v2' }];
    config.lanes.standard.embedding_targets = [{ provider: 'openai', model: 'text-embedding-9' }];
    const parsed = parseLanesConfig(
      { ...config, prices: { 'elevenlabs/music_v2': { input: 1, output: 1 } } },
      LANES,
      'test',
    );
    expect(unpricedTargets(parsed, Date.now())).toEqual([
      expect.stringMatching(/^lanes\.standard\.embedding_targets\.0: openai\/text-embedding-9 has no price/),
      expect.stringMatching(/^media\.image\.0: openai\/my-image-model has no price .*per_image/),
      expect.stringMatching(/^media\.music\.0: elevenlabs\/music_v2 has no music price .*per_second/),
    ]);
  });

  it('a price that starts only in the future does not price a target today', () => {
    const config = withOwnTarget({ 'vllm/llama-70b': { input: 1, output: 1, effective_from: '2999-01-01' } });
    expect(unpricedTargets(parseLanesConfig(config, LANES, 'test'), Date.now())).toEqual([
      expect.stringMatching(/^lanes\.standard\.targets\.2: vllm\/llama-70b/),
    ]);
  });
});
