import { AppError, isAppError } from '@platform/errors';
import type { Request, Response } from 'express';
import type { ApiKeyVerifier } from './api-key-verifier';
import { type LimitCheck, requireApiKeyAndLimits } from './key-and-limits';
import type { KeyGuessingGuard } from './key-guessing';
import type { ApiKeyAuthContext } from './types';

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

function setup(script: () => Script, limits: LimitCheck) {
  const events: string[] = [];
  const failed: string[] = [];
  const apiKeys: Pick<ApiKeyVerifier, 'begin' | 'verify'> = {
    begin: () => {
      events.push('revocation read issued');
      return script();
    },
    verify: () => Promise.reject(new Error('not used by this middleware')),
  };
  const keyGuessing: KeyGuessingGuard = {
    failed: async (ip) => {
      failed.push(ip);
    },
  };
  const handler = requireApiKeyAndLimits(
    { apiKeys, keyGuessing },
    {
      bearer: true,
      limits: (auth) => {
        events.push(`limits started for ${auth.apiKeyId}`);
        return limits(auth);
      },
    },
  );
  const run = async (headers: Record<string, string>) => {
    const req = { headers, ip: '203.0.113.9', socket: {} } as unknown as Request;
    const res = { locals: {} } as Response;
    let nexted = false;
    await handler(req, res, () => {
      nexted = true;
    });
    return { auth: res.locals.auth as ApiKeyAuthContext | undefined, nexted };
  };
  return { events, failed, run };
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
});
