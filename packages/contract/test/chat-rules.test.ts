import { ERROR_CODES } from '@platform/errors';
import {
  CHAT_LIMITS,
  CHAT_RULE_CODES,
  type ChatCompletionRequest,
  type ChatMessage,
  checkChatRules,
  classifyZodError,
  ZChatCompletionRequest,
  ZChatCompletionRequestShape,
} from '../src';

const LANES = ['free', 'paid'];

type Request = Omit<ChatCompletionRequest, 'messages'> & { messages: readonly ChatMessage[] };

function request(overrides: Partial<Request> = {}): Request {
  return {
    lane: 'free',
    project_id: 'proj',
    messages: [{ role: 'user', content: 'hi' }],
    max_tokens: CHAT_LIMITS.defaultMaxTokens,
    ...overrides,
  };
}

const user = (content: string) => ({ role: 'user' as const, content });

describe('ZChatCompletionRequestShape (422 deserialization error)', () => {
  it('lets a missing or empty lane through so the rules answer lane is required', () => {
    const { lane: _lane, ...noLane } = request();
    expect(ZChatCompletionRequestShape.safeParse(noLane).success).toBe(true);
    expect(ZChatCompletionRequestShape.safeParse({ ...noLane, lane: '' }).success).toBe(true);
  });

  it('fails when project_id is omitted, and passes an empty project_id on to the rules', () => {
    const { project_id: _p, ...noProject } = request();
    const result = ZChatCompletionRequestShape.safeParse(noProject);
    expect(result.success).toBe(false);
    if (!result.success) expect(classifyZodError(result.error)).toBe('deserialization_error');
    expect(ZChatCompletionRequestShape.safeParse(request({ project_id: '' })).success).toBe(true);
  });

  it.each([
    ['messages not an array', { messages: 'hi' }],
    ['content not a string', { messages: [{ role: 'user', content: 1 }] }],
    ['unknown role', { messages: [{ role: 'tool', content: 'x' }] }],
    ['lane not a string', { lane: 5 }],
    ['max_tokens not an integer', { max_tokens: 1.5 }],
    ['max_tokens zero', { max_tokens: 0 }],
    ['temperature a string', { temperature: 'hot' }],
  ])('fails on %s', (_name, patch) => {
    expect(ZChatCompletionRequestShape.safeParse({ ...request(), ...patch }).success).toBe(false);
  });

  it('defaults max_tokens to 4096 and drops unknown fields such as stream', () => {
    const { max_tokens: _m, ...rest } = request();
    const parsed = ZChatCompletionRequestShape.parse({ ...rest, stream: true });
    expect(parsed.max_tokens).toBe(4096);
    expect(parsed).not.toHaveProperty('stream');
  });
});

describe('checkChatRules', () => {
  it('returns null for a valid request', () => {
    expect(checkChatRules(request(), LANES)).toBeNull();
    expect(checkChatRules(request(), new Set(LANES))).toBeNull();
  });

  it('returns only codes of the closed error list', () => {
    for (const code of CHAT_RULE_CODES) expect(ERROR_CODES[code].status).toBe(400);
  });

  it.each([
    ['lane missing', { lane: undefined }, 'lane_required'],
    ['lane empty', { lane: '' }, 'lane_required'],
    ['messages empty', { messages: [] }, 'messages_empty'],
    ['project_id empty', { project_id: '' }, 'project_id_required'],
    ['project_id of 129 chars', { project_id: 'p'.repeat(129) }, 'project_id_too_long'],
    ['129 messages', { messages: Array(129).fill(user('x')) }, 'too_many_messages'],
    ['lane not allowed', { lane: 'premium' }, 'unknown_lane'],
    ['max_tokens above the ceiling', { max_tokens: CHAT_LIMITS.maxMaxTokens + 1 }, 'max_tokens_too_large'],
    ['temperature above 2', { temperature: 2.01 }, 'temperature_out_of_range'],
    ['negative temperature', { temperature: -0.1 }, 'temperature_out_of_range'],
  ] as const)('%s -> %s', (_name, patch, code) => {
    expect(checkChatRules(request(patch), LANES)).toBe(code);
  });

  it('accepts the boundaries: 128 messages, 128-char project_id, temperature 0 and 2', () => {
    expect(checkChatRules(request({ messages: Array(128).fill(user('x')) }), LANES)).toBeNull();
    expect(checkChatRules(request({ project_id: 'p'.repeat(128) }), LANES)).toBeNull();
    expect(checkChatRules(request({ temperature: 0 }), LANES)).toBeNull();
    expect(
      checkChatRules(request({ temperature: 2, max_tokens: CHAT_LIMITS.maxMaxTokens }), LANES),
    ).toBeNull();
  });

  it('counts project_id length in characters, not UTF-16 units', () => {
    expect(checkChatRules(request({ project_id: '😀'.repeat(128) }), LANES)).toBeNull();
    expect(checkChatRules(request({ project_id: '😀'.repeat(129) }), LANES)).toBe('project_id_too_long');
  });

  describe('64 KiB per message, counted in UTF-8 bytes', () => {
    // '€' is 3 bytes: 21845 of them are 65535 bytes.
    const euros = '€'.repeat(21_845);

    it('accepts a multi-byte message of exactly 65536 bytes', () => {
      const content = `${euros}a`;
      expect(Buffer.byteLength(content)).toBe(65_536);
      expect(checkChatRules(request({ messages: [user(content)] }), LANES)).toBeNull();
      expect(checkChatRules(request({ messages: [user('😀'.repeat(16_384))] }), LANES)).toBeNull();
    });

    it('refuses one byte more, although it has far fewer than 65536 characters', () => {
      const content = `${euros}ab`;
      expect(content.length).toBe(21_847);
      expect(checkChatRules(request({ messages: [user(content)] }), LANES)).toBe('message_too_long');
      expect(checkChatRules(request({ messages: [user(`${euros}€`)] }), LANES)).toBe('message_too_long');
    });
  });

  it('refuses more than 8 MiB in total even when every message is within 64 KiB', () => {
    const full = 'a'.repeat(CHAT_LIMITS.maxMessageBytes);
    const exactly8MiB = Array(128).fill(user(full));
    expect(checkChatRules(request({ messages: exactly8MiB }), LANES)).toBeNull();
    const over = [...Array(127).fill(user(full)), user(`${full.slice(1)}€`)];
    expect(checkChatRules(request({ messages: over }), LANES)).toBe('message_too_long');
    const overTotal = [...Array(128).fill(user(full)), user('a')];
    expect(checkChatRules(request({ messages: overTotal }), LANES)).toBe('total_content_too_long');
  });

  describe('precedence: the first broken rule wins', () => {
    const big = user('a'.repeat(CHAT_LIMITS.maxMessageBytes + 1));

    it.each([
      ['lane over every other rule', { lane: '', messages: [], project_id: '' }, 'lane_required'],
      [
        'empty messages over project_id and lane membership',
        { messages: [], project_id: '', lane: 'x' },
        'messages_empty',
      ],
      ['message size over project_id', { messages: [big], project_id: '' }, 'message_too_long'],
      [
        'message size over total size',
        { messages: [big, ...Array(200).fill(user('a'.repeat(65_536)))] },
        'message_too_long',
      ],
      [
        'project_id over message count',
        { project_id: '', messages: Array(129).fill(user('x')) },
        'project_id_required',
      ],
      [
        'message count over lane membership',
        { lane: 'premium', messages: Array(129).fill(user('x')) },
        'too_many_messages',
      ],
      ['lane membership over max_tokens', { lane: 'premium', max_tokens: 10_000_000 }, 'unknown_lane'],
    ] as const)('%s', (_name, patch, code) => {
      expect(checkChatRules(request(patch), LANES)).toBe(code);
    });
  });
});

describe('ZChatCompletionRequest (documented schema) agrees with shape + rules', () => {
  const samples: unknown[] = [
    request(),
    request({ lane: '' }),
    request({ messages: [] }),
    request({ project_id: '' }),
    request({ project_id: 'p'.repeat(129) }),
    request({ project_id: '😀'.repeat(128) }),
    request({ messages: Array(129).fill(user('x')) }),
    request({ messages: [user('€'.repeat(21_846))] }),
    request({ messages: [user(`${'€'.repeat(21_845)}a`)] }),
    request({ max_tokens: CHAT_LIMITS.maxMaxTokens + 1 }),
    request({ temperature: 3 }),
  ];

  it.each(samples.map((s, i) => [i, s]))('sample %i', (_i, sample) => {
    const shape = ZChatCompletionRequestShape.safeParse(sample);
    const expected = shape.success && checkChatRules(shape.data, LANES) === null;
    expect(ZChatCompletionRequest.safeParse(sample).success).toBe(expected);
  });
});
