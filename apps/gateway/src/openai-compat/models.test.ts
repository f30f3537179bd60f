import { AppError } from '@platform/errors';
import { lanesConfig } from '../../test/support/lanes';
import { parseLanesConfig } from '../ai/config/lanes';
import { toOpenAiErrorBody } from './errors';
import { listModelIds, resolveModel, validModelsText } from './models';

const config = parseLanesConfig(
  lanesConfig(
    {
      free: ['groq:llama', 'cerebras:gpt-oss', 'google:gemini'],
      standard: ['openrouter:openai/gpt-4o-mini', 'openai:gpt-4o-mini', 'groq:gpt-4o-mini'],
      hidden: ['openai:x'],
    },
    {
      image: ['openai:dall-e-3'],
      tts: ['openai:tts-1'],
      music: ['elevenlabs:music_v1'],
      soundfx: ['elevenlabs:sfx'],
    },
  ),
  ['free', 'standard'],
  'test',
);
const rt = { config, allowedLanes: new Set(['free', 'standard']) };

describe('resolveModel', () => {
  it.each([
    ['free', { lane: 'free', model: undefined }],
    ['free/gpt-oss', { lane: 'free', model: 'gpt-oss' }],
    ['standard/openai/gpt-4o-mini', { lane: 'standard', model: 'openai/gpt-4o-mini' }],
    ['standard/gpt-4o-mini', { lane: 'standard', model: 'gpt-4o-mini' }],
    // A plain model name: the first allowed lane listing that exact model.
    ['llama', { lane: 'free', model: 'llama' }],
    ['gpt-4o-mini', { lane: 'standard', model: 'gpt-4o-mini' }],
    ['openai/gpt-4o-mini', { lane: 'standard', model: 'openai/gpt-4o-mini' }],
  ])('resolves %s', (value, expected) => {
    expect(resolveModel(rt, value)).toEqual(expected);
  });

  it.each(['hidden', 'hidden/x', 'x', 'free/', 'free/llama/', 'freex', 'Free', 'Llama', 'gpt-4o', ''])(
    'refuses %j',
    (value) => {
      expect(resolveModel(rt, value)).toBeNull();
    },
  );

  it('gives a plain name to the first lane of AI_ALLOWED_LANES that lists it, whatever the config order', () => {
    const both = parseLanesConfig(
      lanesConfig(
        {
          free: ['groq:llama', 'cerebras:gpt-oss', 'google:gemini'],
          premium: ['openai:shared', 'openai:only-premium'],
          standard: ['groq:shared'],
        },
        {
          image: ['openai:dall-e-3'],
          tts: ['openai:tts-1'],
          music: ['elevenlabs:m'],
          soundfx: ['elevenlabs:s'],
        },
      ),
      ['standard', 'premium'],
      'test',
    );
    const inOrder = (lanes: string[]) => ({ config: both, allowedLanes: new Set(lanes) });
    expect(resolveModel(inOrder(['standard', 'premium']), 'shared')).toEqual({
      lane: 'standard',
      model: 'shared',
    });
    expect(resolveModel(inOrder(['premium', 'standard']), 'shared')).toEqual({
      lane: 'premium',
      model: 'shared',
    });
    // A lane not allowed on this instance is never chosen.
    expect(resolveModel(inOrder(['standard']), 'only-premium')).toBeNull();
  });

  it('lists the valid names for a 404, cut to 24', () => {
    expect(validModelsText(rt)).toBe(listModelIds(rt).join(', '));
    const many = new Set(Array.from({ length: 30 }, (_, i) => `lane${i}`));
    const big = {
      config: { ...config, lanes: Object.fromEntries([...many].map((l) => [l, config.lanes.free])) },
      allowedLanes: many,
    };
    const text = validModelsText(big as typeof rt);
    expect(text.split(', ').length).toBe(25);
    expect(text).toMatch(/, … \(120 in all\)$/);
  });

  it('lists allowed lanes and their distinct models', () => {
    expect(listModelIds(rt)).toEqual([
      'free',
      'free/llama',
      'free/gpt-oss',
      'free/gemini',
      'standard',
      'standard/openai/gpt-4o-mini',
      'standard/gpt-4o-mini',
    ]);
  });
});

describe('toOpenAiErrorBody', () => {
  it('names the first broken field of a validation error in message and param', () => {
    const err = new AppError('validation_failed', { details: [{ path: 'top_p', message: 'Too big' }] });
    expect(toOpenAiErrorBody(err)).toEqual({
      error: {
        message: 'validation failed: top_p: Too big',
        type: 'invalid_request_error',
        param: 'top_p',
        code: 'validation_failed',
      },
    });
  });

  it('maps statuses to OpenAI error types', () => {
    expect(toOpenAiErrorBody(new AppError('rate_limited')).error).toMatchObject({
      type: 'requests',
      code: 'rate_limit_exceeded',
    });
    expect(toOpenAiErrorBody(new AppError('upstream_timeout')).error).toEqual({
      message: 'upstream AI service timed out',
      type: 'server_error',
      param: null,
      code: 'upstream_timeout',
    });
  });
});
