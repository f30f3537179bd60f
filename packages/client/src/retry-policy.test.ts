import { DEFAULT_BACKOFF_MS, parseRetryAfter, planRetry, resolveRetryPolicy } from './retry-policy';

const policy = resolveRetryPolicy(undefined);
const fresh = { retries: 0, serverErrorRetries: 0 };

/** Runs the policy over a sequence of outcomes the way the transport does and returns the waits. */
function waits(outcomes: Parameters<typeof planRetry>[0][]): (number | undefined)[] {
  const state = { ...fresh };
  const out: (number | undefined)[] = [];
  for (const outcome of outcomes) {
    const delay = planRetry(outcome, state, policy);
    out.push(delay);
    if (delay === undefined) break;
    if (outcome.kind === 'response' && outcome.status >= 500 && outcome.status !== 504)
      state.serverErrorRetries += 1;
    state.retries += 1;
  }
  return out;
}

const gatewayTimeout = { kind: 'response', status: 504 } as const;

describe('planRetry', () => {
  it('never retries a 401 or another 4xx apart from 429', () => {
    for (const status of [400, 401, 403, 404, 409, 422]) {
      expect(planRetry({ kind: 'response', status }, fresh, policy)).toBeUndefined();
    }
  });

  it('backs a 504 off 2 s, 4 s, 8 s and then reports', () => {
    expect(DEFAULT_BACKOFF_MS).toEqual([2000, 4000, 8000]);
    expect(waits([gatewayTimeout, gatewayTimeout, gatewayTimeout, gatewayTimeout])).toEqual([
      2000,
      4000,
      8000,
      undefined,
    ]);
  });

  it('retries other 5xx exactly once', () => {
    expect(
      waits([
        { kind: 'response', status: 500 },
        { kind: 'response', status: 502 },
      ]),
    ).toEqual([2000, undefined]);
  });

  it('backs network errors off like a 504', () => {
    const network = { kind: 'network' } as const;
    expect(waits([network, network, network, network])).toEqual([2000, 4000, 8000, undefined]);
  });

  it('waits Retry-After on the first 429 and at least the previous backoff step afterwards', () => {
    const limited = { kind: 'response', status: 429, retryAfterMs: 1000 } as const;
    expect(waits([limited, limited, limited, limited])).toEqual([1000, 2000, 4000, undefined]);
    const long = { kind: 'response', status: 429, retryAfterMs: 5000 } as const;
    expect(waits([long, long])).toEqual([5000, 5000]);
  });

  it('uses plain backoff for a 429 without Retry-After', () => {
    expect(waits([{ kind: 'response', status: 429 }])).toEqual([2000]);
  });

  it('reports a 429 at once when Retry-After is beyond maxRetryAfterMs', () => {
    const capped = resolveRetryPolicy({ maxRetryAfterMs: 10_000 });
    expect(planRetry({ kind: 'response', status: 429, retryAfterMs: 10_001 }, fresh, capped)).toBeUndefined();
    expect(planRetry({ kind: 'response', status: 429, retryAfterMs: 10_000 }, fresh, capped)).toBe(10_000);
  });

  it('shares one budget across kinds, so a call makes at most backoff length + 1 requests', () => {
    expect(
      waits([{ kind: 'network' }, gatewayTimeout, { kind: 'response', status: 503 }, gatewayTimeout]),
    ).toEqual([2000, 4000, 8000, undefined]);
  });

  it('disables every retry with retry: false', () => {
    expect(planRetry(gatewayTimeout, fresh, resolveRetryPolicy(false))).toBeUndefined();
  });

  it('rejects negative backoff steps', () => {
    expect(() => resolveRetryPolicy({ backoffMs: [100, -1] })).toThrow(TypeError);
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-11-21T10:00:00Z');

  it('reads delay-seconds', () => {
    expect(parseRetryAfter('7', now)).toBe(7000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
  });

  it('reads an HTTP date relative to now, a past date meaning now', () => {
    expect(parseRetryAfter('Sat, 21 Nov 2026 10:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Sat, 21 Nov 2026 09:59:00 GMT', now)).toBe(0);
  });

  it('ignores missing and malformed values', () => {
    expect(parseRetryAfter(null, now)).toBeUndefined();
    expect(parseRetryAfter('-1', now)).toBeUndefined();
    expect(parseRetryAfter('1.5', now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
  });
});
