import {
  accessLogFieldsOf,
  endingOf,
  type StreamOutcome,
  type StreamSegment,
  sumSegments,
} from './stream-outcome';

const a = { provider: 'openai', model: 'a' };
const b = { provider: 'anthropic', model: 'b' };
const seg = (target: typeof a, over: Partial<StreamSegment> = {}): StreamSegment => ({
  target,
  usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  cache: null,
  estimated: false,
  completed: true,
  contentChars: 20,
  ...over,
});

describe('the outcome summer', () => {
  it('sums usage and cache over the segments, and says when any part is an estimate', () => {
    const sum = sumSegments([
      seg(a, { completed: false, estimated: true, cache: { read: 2, write: 1 } }),
      seg(b, { mode: 'instruction', cache: { read: 3, write: 0 } }),
    ]);
    expect(sum).toEqual({
      usage: { prompt_tokens: 20, completion_tokens: 10, total_tokens: 30 },
      cache: { read: 5, write: 1 },
      estimated: true,
    });
    expect(sumSegments([seg(a, { usage: null })])).toEqual({ usage: null, cache: null, estimated: false });
  });

  it('names the real ending: aborted before error before continued before completed', () => {
    const two = [seg(a), seg(b)];
    expect(endingOf({ aborted: true, errorCode: 'upstream_error', segments: two })).toBe('aborted');
    expect(endingOf({ aborted: false, errorCode: 'upstream_error', segments: two })).toBe('error');
    expect(endingOf({ aborted: false, errorCode: null, segments: two })).toBe('continued');
    expect(endingOf({ aborted: false, errorCode: null, segments: [seg(a)] })).toBe('completed');
  });

  it('puts the targets, the continuation modes and an in-band error on the access-log line', () => {
    const base = { status: 200, target: b, usage: null, cache: null, estimated: false };
    const continued: StreamOutcome = {
      ...base,
      segments: [seg(a), seg(b, { mode: 'instruction' })],
      ending: 'continued',
    };
    expect(accessLogFieldsOf(continued)).toEqual({
      stream: 'continued',
      targets: ['openai/a', 'anthropic/b'],
      continuations: ['instruction'],
    });
    const failed: StreamOutcome = {
      ...base,
      status: 502,
      segments: [seg(a)],
      ending: 'error',
      error: 'upstream_error',
      cause: 'the stream from openai/a was cut; no target was left to continue it',
    };
    expect(accessLogFieldsOf(failed)).toEqual({
      stream: 'error',
      stream_error: 'upstream_error',
      stream_error_cause: failed.cause,
    });
    expect(accessLogFieldsOf({ ...base, segments: [seg(a)], ending: 'completed' })).toEqual({
      stream: 'completed',
    });
  });
});
