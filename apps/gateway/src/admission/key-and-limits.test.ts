import { AppError, isAppError } from '@platform/errors';
import type { Request, Response } from 'express';
import type { ApiKeyVerifier } from '../auth/api-key-verifier';
import type { KeyGuessingGuard } from '../auth/key-guessing';
import type { ApiKeyAuthContext } from '../auth/types';
import { type LimitCheck, requireApiKeyAndLimits } from './key-and-limits';
import { admissionBeforeError, type PendingAdmission, takePendingAdmission } from './pending';

// The middleware's order of events against a scripted verifier: when the
// limits start (same tick as the revocation read for a cached key), and
// which answer wins when the key and the limits disagree.

const KEY = `gw_${'k'.repeat(43)}`;
const ID: ApiKeyAuthContext = { kind: 'api_key', userId: 'u1', apiKeyId: 'k1', scope: 'all' };

type Script = { cached: ApiKeyAuthContext | null; result: Promise<ApiKeyAuthContext | null> };

function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

type Peek = ReturnType<ApiKeyVerifier['peek']>;

function setup(
  script: () => Script,
  limits: LimitCheck,
  opts: { peek?: () => Peek; deferred?: boolean } = {},
) {
  const events: string[] = [];
  const failed: string[] = [];
  let now = 1_000_000;
  const apiKeys: Pick<ApiKeyVerifier, 'begin' | 'verify' | 'peek' | 'confirm' | 'forget'> = {
    begin: () => {
      events.push('revocation read issued');
      return script();
    },
    verify: () => Promise.reject(new Error('not used by this middleware')),
    peek: () => {
      events.push('peek');
      return opts.peek ? opts.peek() : null;
    },
    confirm: (id) => {
      events.push(`confirmed ${id.apiKeyId}`);
    },
    forget: (hash) => {
      events.push(`forgot ${hash}`);
    },
  };
  const keyGuessing: KeyGuessingGuard = {
    failed: async (ip) => {
      failed.push(ip);
    },
  };
  const handler = requireApiKeyAndLimits(
    { apiKeys, keyGuessing, clock: () => now },
    {
      bearer: true,
      limits: (auth) => {
        events.push(`limits started for ${auth.apiKeyId}`);
        return limits(auth);
      },
      ...(opts.deferred
        ? {
            deferredRate: (auth: ApiKeyAuthContext) => ({
              key: `rl:ai:key:${auth.apiKeyId}`,
              max: 3,
              windowMs: 60_000,
            }),
          }
        : {}),
    },
  );
  const runWith = async (headers: Record<string, string>) => {
    const req = { headers, ip: '203.0.113.9', socket: {} } as unknown as Request;
    const res = { locals: {} } as Response;
    let nexted = false;
    await handler(req, res, () => {
      nexted = true;
    });
    return { auth: res.locals.auth as ApiKeyAuthContext | undefined, nexted, res };
  };
  const run = async (headers: Record<string, string>) => {
    const { auth, nexted } = await runWith(headers);
    return { auth, nexted };
  };
  const advance = (ms: number) => {
    now += ms;
  };
  return { events, failed, run, runWith, advance };
}

/** What admissionBeforeError passes on for `err` when the request carries `res`'s pending admission. */
function afterError(res: Response, err: unknown): Promise<unknown> {
  return new Promise((resolve) => {
    admissionBeforeError()(err, {} as Request, res, resolve);
  });
}

async function errorOf(promise: Promise<unknown>): Promise<AppError> {
  try {
    await promise;
  } catch (err) {
    if (isAppError(err)) return err;
    throw err;
  }
  throw new Error('expected a refusal');
}

describe('requireApiKeyAndLimits', () => {
  it('starts the limits in the same tick as the revocation read when the key is cached', async () => {
    const lookup = deferred<ApiKeyAuthContext | null>();
    const t = setup(
      () => ({ cached: ID, result: lookup.promise }),
      async () => {},
    );
    const done = t.run({ 'x-api-key': KEY });
    // Nothing has resolved yet: both went out before the first await.
    await Promise.resolve();
    expect(t.events).toEqual(['revocation read issued', 'limits started for k1']);
    lookup.resolve(ID);
    await expect(done).resolves.toEqual({ auth: ID, nexted: true });
  });

  it('starts the limits only once an uncached key is known valid', async () => {
    const lookup = deferred<ApiKeyAuthContext | null>();
    const t = setup(
      () => ({ cached: null, result: lookup.promise }),
      async () => {},
    );
    const done = t.run({ authorization: `Bearer ${KEY}` });
    await new Promise((r) => setImmediate(r));
    expect(t.events).toEqual(['revocation read issued']);
    lookup.resolve(ID);
    await expect(done).resolves.toEqual({ auth: ID, nexted: true });
    expect(t.events).toEqual(['revocation read issued', 'limits started for k1']);
  });

  it('answers the limit refusal (429) for a valid key', async () => {
    const refusal = new AppError('rate_limited', { headers: { 'Retry-After': '7' } });
    const t = setup(
      () => ({ cached: ID, result: Promise.resolve(ID) }),
      () => Promise.reject(refusal),
    );
    expect(await errorOf(t.run({ 'x-api-key': KEY }))).toBe(refusal);
    expect(t.failed).toEqual([]);
  });

  it('answers 401 for a key revoked since it was cached, though the limits refused too', async () => {
    const t = setup(
      () => ({ cached: ID, result: Promise.resolve(null) }),
      () => Promise.reject(new AppError('rate_limited')),
    );
    expect((await errorOf(t.run({ 'x-api-key': KEY }))).code).toBe('invalid_api_key');
    expect(t.events).toEqual(['revocation read issued', 'limits started for k1']);
    expect(t.failed).toEqual(['203.0.113.9']);
  });

  it('never runs the limits for an unknown key', async () => {
    const t = setup(
      () => ({ cached: null, result: Promise.resolve(null) }),
      async () => {},
    );
    expect((await errorOf(t.run({ 'x-api-key': KEY }))).code).toBe('invalid_api_key');
    expect(t.events).toEqual(['revocation read issued']);
  });

  it('answers 503 when the store cannot say, after the early limits settle', async () => {
    const limits = deferred<void>();
    let settled = false;
    const t = setup(
      () => ({ cached: ID, result: Promise.reject(new Error('store down')) }),
      () =>
        limits.promise.finally(() => {
          settled = true;
        }),
    );
    const answer = errorOf(t.run({ 'x-api-key': KEY }));
    await new Promise((r) => setImmediate(r));
    limits.resolve();
    expect((await answer).code).toBe('service_unavailable');
    expect(settled).toBe(true);
  });

  it('answers 401 missing api key without a key, and ignores Bearer when x-api-key is present', async () => {
    const t = setup(
      () => ({ cached: null, result: Promise.resolve(ID) }),
      async () => {},
    );
    expect((await errorOf(t.run({}))).code).toBe('missing_api_key');
    await expect(t.run({ 'x-api-key': KEY, authorization: 'Bearer other' })).resolves.toEqual({
      auth: ID,
      nexted: true,
    });
  });

  describe('with deferredRate (a route that reserves budgets)', () => {
    const PEEKED = { identity: ID, markerKey: 'api-keys:revoked:h1', hash: 'h1' };
    const uncalled = (): Script => {
      throw new Error('no store read expected');
    };

    it('lets a cached key through with no store read and hands the reservation its gate', async () => {
      const t = setup(uncalled, async () => {}, { peek: () => PEEKED, deferred: true });
      const { auth, nexted, res } = await t.runWith({ 'x-api-key': KEY });
      expect({ auth, nexted }).toEqual({ auth: ID, nexted: true });
      expect(t.events).toEqual(['peek']);
      const pending = takePendingAdmission(res) as PendingAdmission;
      expect(pending.gate).toEqual({
        markerKey: 'api-keys:revoked:h1',
        rate: { key: 'rl:ai:key:k1', max: 3, windowMs: 60_000 },
      });
      // Taken once: the router's error step then has nothing left to check.
      expect(takePendingAdmission(res)).toBeUndefined();
      pending.passed();
      expect(t.events).toEqual(['peek', 'confirmed k1']);
    });

    it('checks an uncached key before the body, as without deferral', async () => {
      const t = setup(
        () => ({ cached: null, result: Promise.resolve(ID) }),
        async () => {},
        { deferred: true },
      );
      const { nexted, res } = await t.runWith({ 'x-api-key': KEY });
      expect(nexted).toBe(true);
      expect(t.events).toEqual(['peek', 'revocation read issued', 'limits started for k1']);
      expect(takePendingAdmission(res)).toBeUndefined();
    });

    it('a gate refused by the rate answers 429, and the key is checked before its body until the window resets', async () => {
      const t = setup(
        () => ({ cached: ID, result: Promise.resolve(ID) }),
        async () => {},
        {
          peek: () => PEEKED,
          deferred: true,
        },
      );
      const first = await t.runWith({ 'x-api-key': KEY });
      const pending = takePendingAdmission(first.res) as PendingAdmission;
      const refusal = await errorOf(pending.refused({ refused: 'rate', resetMs: 5000 }));
      expect(refusal.code).toBe('rate_limited');
      expect(refusal.headers).toEqual({ 'Retry-After': '5' });

      t.events.length = 0;
      const second = await t.runWith({ 'x-api-key': KEY });
      expect(t.events).toEqual(['peek', 'revocation read issued', 'limits started for k1']);
      expect(takePendingAdmission(second.res)).toBeUndefined();

      t.advance(5000);
      t.events.length = 0;
      const third = await t.runWith({ 'x-api-key': KEY });
      expect(t.events).toEqual(['peek']);
      expect(takePendingAdmission(third.res)).toBeDefined();
    });

    it('a gate refused as revoked drops the cached key and answers 401 from the full check', async () => {
      const t = setup(
        () => ({ cached: null, result: Promise.resolve(null) }),
        async () => {},
        {
          peek: () => PEEKED,
          deferred: true,
        },
      );
      const { res } = await t.runWith({ 'x-api-key': KEY });
      const pending = takePendingAdmission(res) as PendingAdmission;
      expect((await errorOf(pending.refused({ refused: 'revoked' }))).code).toBe('invalid_api_key');
      expect(t.events).toEqual(['peek', 'forgot h1', 'revocation read issued']);
      expect(t.failed).toEqual(['203.0.113.9']);
    });

    it('a request that fails before its reservation gets the key check first: its refusal wins', async () => {
      const t = setup(
        () => ({ cached: ID, result: Promise.resolve(ID) }),
        () => Promise.reject(new AppError('rate_limited', { headers: { 'Retry-After': '9' } })),
        { peek: () => PEEKED, deferred: true },
      );
      const { res } = await t.runWith({ 'x-api-key': KEY });
      const invalid = new AppError('validation_failed');
      const passedOn = await afterError(res, invalid);
      expect(isAppError(passedOn) && passedOn.code).toBe('rate_limited');
      expect(t.events).toEqual(['peek', 'revocation read issued', 'limits started for k1']);
    });

    it('a request that fails before its reservation keeps its own error when the key checks out', async () => {
      const t = setup(
        () => ({ cached: ID, result: Promise.resolve(ID) }),
        async () => {},
        {
          peek: () => PEEKED,
          deferred: true,
        },
      );
      const { res } = await t.runWith({ 'x-api-key': KEY });
      const invalid = new AppError('validation_failed');
      expect(await afterError(res, invalid)).toBe(invalid);
      // Counted once: a second error step finds nothing pending.
      t.events.length = 0;
      expect(await afterError(res, invalid)).toBe(invalid);
      expect(t.events).toEqual([]);
    });
  });
});
