import { AppError } from '@platform/errors';
import type { NextFunction, Request, Response } from 'express';
import { assertTrustedOrigin, requireTrustedOrigin } from './csrf';

// The Origin check on cookie-authenticated writes, on plain request objects.

const env = {
  GATEWAY_PUBLIC_URL: 'https://gw.example.com/app',
  GATEWAY_CORS_ORIGINS: ['https://ui.example.com/'],
};

function run(method: string, headers: Record<string, string>, auth?: { kind: string }): unknown {
  const req = { method, headers } as unknown as Request;
  const res = { locals: auth ? { auth } : {} } as unknown as Response;
  let passed = false;
  const next: NextFunction = () => {
    passed = true;
  };
  try {
    requireTrustedOrigin({ env })(req, res, next);
  } catch (err) {
    return err;
  }
  return passed ? 'next' : 'nothing';
}

describe('requireTrustedOrigin', () => {
  it('safe methods pass without an Origin', () => {
    expect(run('GET', {})).toBe('next');
    expect(run('HEAD', {})).toBe('next');
    expect(run('OPTIONS', {})).toBe('next');
  });

  it('a session write from the gateway origin or a CORS origin passes', () => {
    expect(run('POST', { origin: 'https://gw.example.com' }, { kind: 'session' })).toBe('next');
    expect(run('DELETE', { origin: 'https://ui.example.com' }, { kind: 'session' })).toBe('next');
  });

  it('a session write from another origin, or with none, is 403 csrf_origin', () => {
    const err = run('POST', { origin: 'https://evil.example.com' }, { kind: 'session' });
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).status).toBe(403);
    expect((err as AppError).code).toBe('csrf_origin');
    expect(run('PATCH', {}, { kind: 'session' })).toBeInstanceOf(AppError);
  });

  it('an API-key request is exempt whatever its Origin', () => {
    expect(run('POST', { origin: 'https://evil.example.com' }, { kind: 'api_key' })).toBe('next');
  });

  it('before auth, only an x-api-key header exempts a request', () => {
    expect(run('POST', { 'x-api-key': 'k' })).toBe('next');
    expect(run('POST', { origin: 'https://evil.example.com' })).toBeInstanceOf(AppError);
  });

  it('once authenticated by cookie, an x-api-key header does not exempt it', () => {
    expect(
      run('POST', { 'x-api-key': 'k', origin: 'https://evil.example.com' }, { kind: 'session' }),
    ).toBeInstanceOf(AppError);
  });
});

describe('assertTrustedOrigin', () => {
  it('matches the exact origin: scheme and port count', () => {
    const allowed = new Set(['https://gw.example.com']);
    const req = (origin: string) => ({ headers: { origin } }) as unknown as Request;
    expect(() => assertTrustedOrigin(req('https://gw.example.com'), allowed)).not.toThrow();
    expect(() => assertTrustedOrigin(req('http://gw.example.com'), allowed)).toThrow(AppError);
    expect(() => assertTrustedOrigin(req('https://gw.example.com:8443'), allowed)).toThrow(AppError);
  });
});
