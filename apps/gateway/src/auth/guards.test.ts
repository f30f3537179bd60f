import { createMemoryStore } from '@platform/db';
import { AppError, isAppError } from '@platform/errors';
import type { NextFunction, Request, Response } from 'express';
import { requireServiceToken } from '../usage/service-token';
import { requireTrustedOrigin } from './csrf';
import { createKeyGuessingGuard, INVALID_KEY_LIMIT } from './key-guessing';

// The small guards around identity, without a server: CSRF by Origin, the
// in-house service token, and the bad-key counter per address.

type Guard = (req: Request, res: Response, next: NextFunction) => void;

/** What a guard did with a request: passed it on, or threw which error code. */
function verdict(guard: Guard, req: Partial<Request>, locals: Record<string, unknown> = {}): string {
  let passed = false;
  try {
    guard({ headers: {}, ...req } as Request, { locals } as unknown as Response, () => {
      passed = true;
    });
  } catch (err) {
    return isAppError(err) ? err.code : String(err);
  }
  return passed ? 'next' : 'nothing';
}

describe('requireTrustedOrigin', () => {
  const guard = requireTrustedOrigin({
    env: { GATEWAY_PUBLIC_URL: 'https://gw.example', GATEWAY_CORS_ORIGINS: ['https://console.example'] },
  }) as Guard;
  const session = { auth: { kind: 'session', userId: 'u' } };

  it("a session's write from the gateway's own or a listed origin passes", () => {
    expect(verdict(guard, { method: 'POST', headers: { origin: 'https://gw.example' } }, session)).toBe(
      'next',
    );
    expect(
      verdict(guard, { method: 'DELETE', headers: { origin: 'https://console.example' } }, session),
    ).toBe('next');
  });

  it("a session's write from another origin, or with none, is 403 csrf_origin", () => {
    expect(verdict(guard, { method: 'POST', headers: { origin: 'https://evil.example' } }, session)).toBe(
      'csrf_origin',
    );
    expect(verdict(guard, { method: 'PUT', headers: {} }, session)).toBe('csrf_origin');
  });

  it('reads and API-key callers are exempt', () => {
    expect(verdict(guard, { method: 'GET', headers: { origin: 'https://evil.example' } }, session)).toBe(
      'next',
    );
    const key = { auth: { kind: 'api_key', userId: 'u', apiKeyId: 'k', scope: 'all' } };
    expect(verdict(guard, { method: 'POST', headers: { origin: 'https://evil.example' } }, key)).toBe('next');
    // Before any auth middleware: a request carrying x-api-key is exempt, one without is checked.
    expect(verdict(guard, { method: 'POST', headers: { 'x-api-key': 'gw_x' } })).toBe('next');
    expect(verdict(guard, { method: 'POST', headers: {} })).toBe('csrf_origin');
  });
});

describe('requireServiceToken', () => {
  it('no token configured: the endpoint is off (503)', () => {
    expect(verdict(requireServiceToken(undefined) as Guard, { headers: { authorization: 'Bearer x' } })).toBe(
      'service_unavailable',
    );
  });

  it('none sent is 401, a wrong one 403, the right one passes', () => {
    const guard = requireServiceToken('s3cret-token') as Guard;
    expect(verdict(guard, { headers: {} })).toBe('missing_authentication');
    expect(verdict(guard, { headers: { authorization: 'Basic s3cret-token' } })).toBe(
      'missing_authentication',
    );
    expect(verdict(guard, { headers: { authorization: 'Bearer wrong' } })).toBe('forbidden');
    expect(verdict(guard, { headers: { authorization: 'Bearer s3cret-token' } })).toBe('next');
  });
});

describe('key guessing', () => {
  it('an address may send INVALID_KEY_LIMIT bad keys a minute; the next is 429, other addresses unaffected', async () => {
    const guard = createKeyGuessingGuard(createMemoryStore());
    for (let i = 0; i < INVALID_KEY_LIMIT.max; i += 1) await guard.failed('10.0.0.1');
    const err = await guard.failed('10.0.0.1').then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('rate_limited');
    await expect(guard.failed('10.0.0.2')).resolves.toBeUndefined();
  });
});
