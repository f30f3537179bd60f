import { redactText } from '../src';

// Captured prompts and answers (docs/observability.md) go through redactText:
// the log rules plus key-shaped tokens in free text.

describe('redactText', () => {
  it('masks key-shaped tokens in prose, keeps ordinary words', () => {
    const text =
      'my key is sk-proj-AbCdEf0123456789xyzXYZ and stripe sk_live_0123456789abcdefABCD; ' +
      'a task-0123456789abcdefghij and sk-short stay';
    const out = redactText(text);
    expect(out).toBe(
      'my key is [REDACTED] and stripe [REDACTED]; a task-0123456789abcdefghij and sk-short stay',
    );
  });

  it('applies the log rules too: secret-named JSON properties, bearer tokens, secret query parameters', () => {
    const prompt = JSON.stringify([
      { role: 'user', content: 'call https://x.test/a?api_key=abc123 with Bearer t0k.en' },
      { role: 'user', content: '{"password":"hunter2"}', api_key: 'k-123' },
    ]);
    const out = redactText(prompt);
    expect(out).not.toContain('abc123');
    expect(out).not.toContain('t0k.en');
    expect(out).not.toContain('k-123');
    expect(out).toContain('api_key=[REDACTED]');
    expect(out).toContain('"api_key":"[REDACTED]"');
  });

  it('stays linear on a long run of key characters after many prefixes (a hang fails by the test timeout)', () => {
    const text = `${'sk-'.repeat(50_000)}${'a'.repeat(200_000)}`;
    expect(redactText(text)).toBe('[REDACTED]');
    expect(redactText(`${'sk-ab '.repeat(60_000)}`)).toBe('sk-ab '.repeat(60_000));
  }, 20_000);
});
