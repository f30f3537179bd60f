import { AppError } from '@platform/errors';
import { lanesConfig } from '../../test/support/lanes';
import { parseLanesConfig } from '../ai/lanes';
import { toOpenAiErrorBody } from './errors';
import { listModelIds, resolveModel } from './models';

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
