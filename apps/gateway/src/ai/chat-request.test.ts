import { ZChatCompletionRequestShape } from '@platform/contract';
import fc from 'fast-check';
import { commonChatShape } from './chat-request';

/** Values of every JSON type, and the edge cases of the shape's checks. */
const anyValue = fc.oneof(
  fc.constantFrom(null, true, 0, -1, 1, 1.5, 2 ** 53 - 1, 2 ** 53, 1e308, -0, '', 'x', [], {}),
  fc.string(),
  fc.double(),
  fc.integer(),
);
const text = fc.oneof(
  fc.string(),
  fc.constantFrom('free', 'bench', 'a\u0000b', 'lone \uD800 surrogate', '\uDC00', '🙂', 'Say hello.'),
);
const message = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({ role: fc.constantFrom('user', 'system', 'assistant'), content: text }),
  },
  {
    weight: 3,
    arbitrary: fc.record(
      {
        role: fc.oneof(fc.constantFrom('user', 'system', 'assistant', 'tool', 'User', ''), anyValue),
        content: fc.oneof(text, anyValue, fc.array(fc.record({ type: fc.constant('text'), text }))),
        name: text,
        tool_calls: anyValue,
      },
      { requiredKeys: [] },
    ),
  },
  { weight: 1, arbitrary: anyValue },
);
const body = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record(
      {
        lane: fc.oneof(text, anyValue),
        project_id: fc.oneof(text, anyValue),
        messages: fc.oneof(
          { weight: 5, arbitrary: fc.array(message, { maxLength: 4 }) },
          { weight: 1, arbitrary: anyValue },
        ),
        model: fc.oneof(text, anyValue),
        max_tokens: fc.oneof(fc.integer({ min: -2, max: 200_000 }), anyValue),
        temperature: fc.oneof(fc.double({ min: -1, max: 3, noNaN: true }), anyValue),
        stream: anyValue,
        tools: anyValue,
      },
      { requiredKeys: [] },
    ),
  },
  { weight: 1, arbitrary: anyValue },
  { weight: 1, arbitrary: fc.array(anyValue) },
);

describe('commonChatShape: the chat shape checked by hand', () => {
  it('passes exactly the JSON bodies zod passes, with zod’s result, keys in zod’s order', () => {
    fc.assert(
      fc.property(body, (value) => {
        // As the body parser hands it over: JSON text parsed.
        const input = JSON.parse(JSON.stringify(value)) as unknown;
        const parsed = ZChatCompletionRequestShape.safeParse(input);
        const fast = commonChatShape(input);
        expect(fast !== undefined).toBe(parsed.success);
        if (fast !== undefined && parsed.success) {
          expect(fast).toStrictEqual(parsed.data);
          expect(JSON.stringify(fast)).toBe(JSON.stringify(parsed.data));
        }
      }),
      { numRuns: 5000 },
    );
  });

  it('leaves numbers JSON makes infinite, and keys present as undefined, to zod', () => {
    const huge = JSON.parse('{"project_id":"p","messages":[],"max_tokens":1e999}') as unknown;
    expect(commonChatShape(huge)).toBeUndefined();
    expect(ZChatCompletionRequestShape.safeParse(huge).success).toBe(false);
    const hot = JSON.parse('{"project_id":"p","messages":[],"temperature":-1e999}') as unknown;
    expect(commonChatShape(hot)).toBeUndefined();
    expect(ZChatCompletionRequestShape.safeParse(hot).success).toBe(false);
    // Not JSON, but zod copies such a key: the hand check does not guess.
    expect(commonChatShape({ project_id: 'p', messages: [], lane: undefined })).toBeUndefined();
  });

  it('copies messages: role and content only, never the caller’s objects', () => {
    const input = {
      lane: 'free',
      project_id: 'p',
      messages: [{ role: 'user', content: 'hi', name: 'n' }],
      x: 1,
    };
    const fast = commonChatShape(input);
    expect(fast).toEqual({
      lane: 'free',
      project_id: 'p',
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 4096,
    });
    expect(fast?.messages[0]).not.toBe(input.messages[0]);
  });
});
