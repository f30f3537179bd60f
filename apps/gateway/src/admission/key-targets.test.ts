import { AppError } from '@platform/errors';
import { applyKeyTargetRules } from './key-targets';

// A key's lane and model lists applied to a request, before it is reserved.

const groq = { provider: 'groq', model: 'llama' };
const openai = { provider: 'openai', model: 'gpt-4o-mini' };
const dalle = { provider: 'openai', model: 'dall-e-3' };

function codeOf(fn: () => void): string | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    return err instanceof AppError ? err.code : 'not an AppError';
  }
}

describe('applyKeyTargetRules', () => {
  it('a key without rules leaves the request as it is', () => {
    const chat = { targets: [groq, openai] };
    applyKeyTargetRules(undefined, { endpoint: 'chat', lane: 'free', chat });
    expect(chat.targets).toEqual([groq, openai]);
  });

  it('a lane off the list is 403 key_lane_not_allowed', () => {
    expect(
      codeOf(() => applyKeyTargetRules({ lanes: ['free'] }, { endpoint: 'chat', lane: 'premium' })),
    ).toBe('key_lane_not_allowed');
    expect(
      codeOf(() => applyKeyTargetRules({ lanes: ['free'] }, { endpoint: 'chat', lane: 'free' })),
    ).toBeUndefined();
  });

  it('a media request without a lane is checked under its endpoint name', () => {
    expect(
      codeOf(() => applyKeyTargetRules({ lanes: ['image'] }, { endpoint: 'image', lane: null })),
    ).toBeUndefined();
    expect(codeOf(() => applyKeyTargetRules({ lanes: ['image'] }, { endpoint: 'tts', lane: null }))).toBe(
      'key_lane_not_allowed',
    );
  });

  it("a chat's targets are narrowed in place to the key's models", () => {
    const chat = { targets: [groq, openai] };
    applyKeyTargetRules({ models: ['gpt-4o-mini'] }, { endpoint: 'chat', lane: 'free', chat });
    expect(chat.targets).toEqual([openai]);
  });

  it('a chat with no allowed target left is 403 key_model_not_allowed', () => {
    const chat = { targets: [groq] };
    expect(
      codeOf(() =>
        applyKeyTargetRules({ models: ['gpt-4o-mini'] }, { endpoint: 'chat', lane: 'free', chat }),
      ),
    ).toBe('key_model_not_allowed');
  });

  it('a route with its own targets needs every one of them allowed, naming the refused', () => {
    const request = { endpoint: 'image', lane: null, targets: [dalle, openai] };
    expect(
      codeOf(() => applyKeyTargetRules({ models: ['dall-e-3', 'gpt-4o-mini'] }, request)),
    ).toBeUndefined();
    try {
      applyKeyTargetRules({ models: ['dall-e-3'] }, request);
      throw new Error('no error');
    } catch (err) {
      expect((err as AppError).code).toBe('key_model_not_allowed');
      expect((err as AppError).details?.[0]?.message).toContain('openai/gpt-4o-mini');
      expect((err as AppError).details?.[0]?.message).not.toContain('dall-e-3 is');
    }
  });

  it('a lane list without a model list does not touch the targets', () => {
    const chat = { targets: [groq, openai] };
    applyKeyTargetRules({ lanes: ['free'] }, { endpoint: 'chat', lane: 'free', chat });
    expect(chat.targets).toEqual([groq, openai]);
  });
});
