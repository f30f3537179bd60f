import fc from 'fast-check';
import { redactLine } from '../src';
import { stringEnd } from '../src/redact';

// The scan of a log line finds each JSON string's end with indexOf; it must
// end every string where reading it character by character does.

/** The end of the JSON string at `start`, one character at a time (each backslash escapes the next). */
function stringEndByCharacter(s: string, start: number): number {
  for (let i = start + 1; i < s.length; i++) {
    if (s[i] === '\\') i++;
    else if (s[i] === '"') return i + 1;
  }
  return -1;
}

describe('redaction scan', () => {
  it('ends a string where a character-by-character reading does: escaped quotes, backslash runs, no end', () => {
    const text = fc
      .array(fc.constantFrom('"', '\\', '\\\\', '\\"', 'a', 'key', ' ', '\\u0022'), { maxLength: 30 })
      .map((parts) => `"${parts.join('')}`);
    fc.assert(
      fc.property(text, (s) => {
        expect(stringEnd(s, 0)).toBe(stringEndByCharacter(s, 0));
      }),
      { numRuns: 5000 },
    );
  });

  it('still masks secret query parameters and bearer tokens, and leaves lines without them as they are', () => {
    const line = '{"url":"/x?a=1&token=abc","err":"Bearer sk-123 failed","n":"x=y"}';
    expect(redactLine(line)).toBe(
      '{"url":"/x?a=1&token=[REDACTED]","err":"Bearer [REDACTED] failed","n":"x=y"}',
    );
    const plain = '{"level":"info","req":{"method":"POST","url":"/api/v1/ai/chat/completions"},"msg":"ok"}';
    expect(redactLine(plain)).toBe(plain);
    expect(redactLine('{"apiKey":"sk-1","statusCode":200}')).toBe('{"apiKey":"[REDACTED]","statusCode":200}');
  });
});
