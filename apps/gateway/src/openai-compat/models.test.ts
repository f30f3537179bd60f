import { AppError } from '@platform/errors';
import { parseLanesConfig } from '../ai/lanes';
import { toOpenAiErrorBody } from './errors';
import { listModelIds, resolveModel } from './models';

const config = parseLanesConfig(
  {
    lanes: {
      free: {
        default_model: 'llama',
        targets: [
          { provider: 'groq', model: 'llama' },
          { provider: 'cerebras', model: 'gpt-oss' },
          { provider: 'google', model: 'gemini' },
        ],
      },
      standard: {
        default_model: 'openai/gpt-4o-mini',
        targets: [
          { provider: 'openrouter', model: 'openai/gpt-4o-mini' },
          { provider: 'openai', model: 'gpt-4o-mini' },
          { provider: 'groq', model: 'gpt-4o-mini' },
        ],
      },
      hidden: { default_model: 'x', targets: [{ provider: 'openai', model: 'x' }] },
    },
    media: {
      image: [{ provider: 'openai', model: 'dall-e-3' }],
      tts: [{ provider: 'openai', model: 'tts-1' }],
      music: [{ provider: 'elevenlabs', model: 'music_v1' }],
      soundfx: [{ provider: 'elevenlabs', model: 'sfx' }],
    },
  },
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
  ])('resolves %s', (value, expected) => {
    expect(resolveModel(rt, value)).toEqual(expected);
  });

  it.each(['hidden', 'hidden/x', 'free/', 'free/llama/', 'freex', 'Free', 'llama', ''])(
    'refuses %j',
    (value) => {
      expect(resolveModel(rt, value)).toBeNull();
    },
  );

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
