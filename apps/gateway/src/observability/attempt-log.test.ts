import { type AttemptLog, appendAttempt, firstTokenMs } from './attempt-log';

// The per-request attempt list the request log keeps, and the time to first token from it.

const log = (): AttemptLog => ({ startedAt: 1000, attempts: [] });
const note = (over: Partial<Parameters<typeof appendAttempt>[1]> = {}) => ({
  target: { provider: 'groq', model: 'llama' },
  outcome: 'success',
  status: 200,
  retry: 0,
  startedAt: 1010,
  durationMs: 40,
  ...over,
});

describe('appendAttempt', () => {
  it('keeps the target as provider/model and times from the request start', () => {
    const l = log();
    appendAttempt(l, note());
    expect(l.attempts).toEqual([
      { target: 'groq/llama', outcome: 'success', status: 200, retry: 0, start_ms: 10, duration_ms: 40 },
    ]);
  });

  it('an attempt with no status is null; a clock step back is 0, not negative', () => {
    const l = log();
    appendAttempt(l, note({ status: undefined, startedAt: 990, outcome: 'timeout' }));
    expect(l.attempts[0]).toMatchObject({ status: null, start_ms: 0, outcome: 'timeout' });
  });
});

describe('firstTokenMs', () => {
  const twoTries = (): AttemptLog => {
    const l = log();
    appendAttempt(l, note({ outcome: 'rate_limited', status: 429, startedAt: 1000, durationMs: 30 }));
    appendAttempt(l, note({ target: { provider: 'openai', model: 'x' }, startedAt: 1050, durationMs: 70 }));
    return l;
  };

  it('a stream: the end of the answering attempt from the request start', () => {
    expect(firstTokenMs(twoTries(), 'stream')).toBe(120);
    expect(firstTokenMs(twoTries(), 'chat_stream')).toBe(120);
  });

  it('not a stream: none', () => {
    expect(firstTokenMs(twoTries(), 'chat')).toBeNull();
  });

  it('a stream nobody answered: none', () => {
    const l = log();
    appendAttempt(l, note({ outcome: 'timeout' }));
    expect(firstTokenMs(l, 'stream')).toBeNull();
  });
});
