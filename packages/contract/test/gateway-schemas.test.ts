import {
  classifyZodError,
  MEDIA_AUDIO_CONTENT_TYPES,
  PROVIDERS,
  TTS_FORMATS,
  ZApiKeySummary,
  ZCreateApiKeyRequest,
  ZImageRequest,
  ZListProviderKeysResponse,
  ZMusicRequest,
  ZRequestMagicLinkRequest,
  ZRevokeApiKeyRequest,
  ZSoundFxRequest,
  ZStoreProviderKeyRequest,
  ZTtsRequest,
  ZUsageQuery,
  ZVerifyCodeRequest,
} from '../src';

describe('API keys', () => {
  it.each(['a', 'ci', 'Deploy2026', 'x'.repeat(64)])(
    'accepts the name %j and defaults scope to ai',
    (name) => {
      expect(ZCreateApiKeyRequest.parse({ name })).toEqual({ name, scope: 'ai' });
    },
  );

  it.each(['', 'has space', 'dash-name', 'under_score', 'émile', 'x'.repeat(65), 'trailing\n'])(
    'refuses the name %j',
    (name) => {
      expect(ZCreateApiKeyRequest.safeParse({ name }).success).toBe(false);
    },
  );

  it('refuses scopes other than ai', () => {
    expect(ZCreateApiKeyRequest.safeParse({ name: 'ci', scope: 'admin' }).success).toBe(false);
  });

  it('revokes by UUID only', () => {
    expect(ZRevokeApiKeyRequest.safeParse({ key_id: '5b7e2f10-9c3d-4a8b-b1e2-6f7a8b9c0d1e' }).success).toBe(
      true,
    );
    expect(ZRevokeApiKeyRequest.safeParse({ key_id: 'gw_live_3kT9' }).success).toBe(false);
  });

  it('list entries allow a null last_used_at', () => {
    const entry = {
      key_id: '5b7e2f10-9c3d-4a8b-b1e2-6f7a8b9c0d1e',
      key_prefix: 'gw_',
      name: 'ci',
      scope: 'ai',
      created_at: '2026-11-21T10:00:00.000Z',
      last_used_at: null,
      status: 'revoked',
    };
    expect(ZApiKeySummary.parse(entry)).toEqual(entry);
  });
});

describe('sign-in', () => {
  it('takes an optional http(s) redirect_url only', () => {
    expect(ZRequestMagicLinkRequest.safeParse({ email: 'a@example.com' }).success).toBe(true);
    expect(
      ZRequestMagicLinkRequest.safeParse({ email: 'a@example.com', redirect_url: 'javascript:x' }).success,
    ).toBe(false);
  });

  it('limits the code to 1..512 characters', () => {
    expect(ZVerifyCodeRequest.safeParse({ code: '' }).success).toBe(false);
    expect(ZVerifyCodeRequest.safeParse({ code: 'c'.repeat(512) }).success).toBe(true);
    expect(ZVerifyCodeRequest.safeParse({ code: 'c'.repeat(513) }).success).toBe(false);
  });
});

describe('stored provider keys', () => {
  it('accepts every built-in provider and any well-formed name (the gateway checks it is configured)', () => {
    for (const provider of [...PROVIDERS, 'together', 'my-vllm']) {
      expect(ZStoreProviderKeyRequest.safeParse({ provider, key: 'sk-12345678' }).success).toBe(true);
    }
    for (const provider of ['Anthropic', '', 'a'.repeat(33), 'a b', '../x']) {
      expect(ZStoreProviderKeyRequest.safeParse({ provider, key: 'sk-12345678' }).success).toBe(false);
    }
  });

  it.each(['short', 'k'.repeat(513), 'sk-1234 5678', 'sk-12345678\n'])('refuses the key %j', (key) => {
    expect(ZStoreProviderKeyRequest.safeParse({ provider: 'openai', key }).success).toBe(false);
  });

  it('lists keys as a bare array', () => {
    const list = [{ provider: 'groq', created_at: '2026-11-21T10:00:00Z', last4: 'abcd' }];
    expect(ZListProviderKeysResponse.parse(list)).toEqual(list);
    expect(ZListProviderKeysResponse.safeParse({ keys: list }).success).toBe(false);
  });
});

describe('media requests', () => {
  it('fills the image defaults and bounds n and size', () => {
    expect(ZImageRequest.parse({ prompt: 'p', project_id: 'x' })).toEqual({
      prompt: 'p',
      project_id: 'x',
      size: '1024x1024',
      n: 1,
    });
    expect(ZImageRequest.safeParse({ prompt: 'p', project_id: 'x', n: 5 }).success).toBe(false);
    expect(ZImageRequest.safeParse({ prompt: 'p', project_id: 'x', size: '2048x2048' }).success).toBe(false);
    expect(ZImageRequest.safeParse({ prompt: 'p'.repeat(4001), project_id: 'x' }).success).toBe(false);
  });

  it('fills the tts defaults and maps every format to a Content-Type', () => {
    expect(ZTtsRequest.parse({ text: 't', project_id: 'x' })).toMatchObject({
      voice: 'alloy',
      format: 'mp3',
    });
    expect(ZTtsRequest.safeParse({ text: 't', project_id: 'x', speed: 4.5 }).success).toBe(false);
    expect(Object.keys(MEDIA_AUDIO_CONTENT_TYPES).sort()).toEqual([...TTS_FORMATS].sort());
    expect(MEDIA_AUDIO_CONTENT_TYPES.mp3).toBe('audio/mpeg');
  });

  it('bounds music and sound-effect durations', () => {
    expect(ZMusicRequest.parse({ prompt: 'p', project_id: 'x' }).duration_seconds).toBe(30);
    expect(ZMusicRequest.safeParse({ prompt: 'p', project_id: 'x', duration_seconds: 301 }).success).toBe(
      false,
    );
    expect(ZSoundFxRequest.safeParse({ prompt: 'p', project_id: 'x', duration_seconds: 0.5 }).success).toBe(
      true,
    );
    expect(ZSoundFxRequest.safeParse({ prompt: 'p', project_id: 'x', duration_seconds: 22.5 }).success).toBe(
      false,
    );
    expect(ZSoundFxRequest.safeParse({ prompt: '', project_id: 'x' }).success).toBe(false);
  });

  it('requires a non-empty project_id', () => {
    expect(ZMusicRequest.safeParse({ prompt: 'p', project_id: '' }).success).toBe(false);
  });
});

describe('usage query', () => {
  it('accepts an inclusive range of up to 366 days', () => {
    expect(ZUsageQuery.safeParse({ from: '2026-01-01', to: '2026-01-01' }).success).toBe(true);
    expect(ZUsageQuery.safeParse({ from: '2024-01-01', to: '2024-12-31' }).success).toBe(true);
    expect(ZUsageQuery.safeParse({ from: '2025-01-01', to: '2026-01-02' }).success).toBe(false);
  });

  it('refuses reversed ranges and impossible dates', () => {
    expect(ZUsageQuery.safeParse({ from: '2026-02-01', to: '2026-01-01' }).success).toBe(false);
    expect(ZUsageQuery.safeParse({ from: '2026-02-30', to: '2026-03-01' }).success).toBe(false);
    expect(ZUsageQuery.safeParse({ from: '2026-1-1', to: '2026-03-01' }).success).toBe(false);
  });
});

describe('classifyZodError', () => {
  it('maps a missing field or wrong type to deserialization_error', () => {
    const missing = ZVerifyCodeRequest.safeParse({});
    const wrongType = ZVerifyCodeRequest.safeParse({ code: 5 });
    expect(!missing.success && classifyZodError(missing.error)).toBe('deserialization_error');
    expect(!wrongType.success && classifyZodError(wrongType.error)).toBe('deserialization_error');
  });

  it('maps a rule broken by a present value to validation_failed', () => {
    const tooLong = ZVerifyCodeRequest.safeParse({ code: 'c'.repeat(513) });
    const badEnum = ZCreateApiKeyRequest.safeParse({ name: 'ci', scope: 'admin' });
    const badFormat = ZRevokeApiKeyRequest.safeParse({ key_id: 'x' });
    for (const r of [tooLong, badEnum, badFormat])
      expect(!r.success && classifyZodError(r.error)).toBe('validation_failed');
  });
});
