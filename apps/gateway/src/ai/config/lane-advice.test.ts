import { laneAdvice } from './lane-advice';

const lane = (
  targets: Array<{ model: string; reasoning_model?: boolean }>,
  first_token_timeout_ms?: number,
) => ({
  default_model: targets[0]?.model ?? '',
  targets: targets.map((t) => ({ provider: 'openai', ...t })),
  ...(first_token_timeout_ms === undefined ? {} : { first_token_timeout_ms }),
});

describe('laneAdvice', () => {
  it('warns about a lane that mixes reasoning and non-reasoning models', () => {
    const advice = laneAdvice({
      lanes: { mixed: lane([{ model: 'gpt-4o-mini' }, { model: 'o3', reasoning_model: true }], 10_000) },
    } as never);
    expect(advice).toEqual([expect.stringContaining('lanes.mixed mixes reasoning models (o3)')]);
  });

  it('warns about a first-token limit on a reasoning lane, and says nothing of a sound config', () => {
    const advice = laneAdvice({
      lanes: {
        thinking: lane([{ model: 'o3', reasoning_model: true }], 5_000),
        fast: lane([{ model: 'llama' }], 10_000),
        patient: lane([{ model: 'o4-mini', reasoning_model: true }]),
      },
    } as never);
    expect(advice).toEqual([expect.stringContaining('lanes.thinking holds reasoning models only')]);
  });
});
