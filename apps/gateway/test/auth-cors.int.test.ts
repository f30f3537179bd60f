import request from 'supertest';
import { APP_ORIGIN, EVIL_ORIGIN, useIdentityHarness } from './support/identity-harness';

const h = useIdentityHarness();

function preflight(origin: string) {
  return request(h.app)
    .options('/api/v1/auth/api-keys')
    .set('Origin', origin)
    .set('Access-Control-Request-Method', 'POST')
    .set('Access-Control-Request-Headers', 'content-type,x-api-key');
}

describe('CORS', () => {
  it('answers a preflight from a listed origin with credentials allowed', async () => {
    const res = await preflight(APP_ORIGIN);
    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe(APP_ORIGIN);
    expect(res.headers['access-control-allow-credentials']).toBe('true');
    expect(res.headers['access-control-allow-methods']).toContain('POST');
    expect(res.headers['access-control-allow-headers']).toContain('x-api-key');
    expect(res.headers.vary).toMatch(/Origin/);
  });

  it('answers a preflight from an unlisted origin without any allow headers', async () => {
    const res = await preflight(EVIL_ORIGIN);
    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    expect(res.headers.vary).toMatch(/Origin/);
  });

  it('gives a listed origin its own origin and credentials on a normal request', async () => {
    const res = await request(h.app).get('/api/v1/me').set('Origin', APP_ORIGIN);
    expect(res.status).toBe(401);
    expect(res.headers['access-control-allow-origin']).toBe(APP_ORIGIN);
    expect(res.headers['access-control-allow-credentials']).toBe('true');
    expect(res.headers['access-control-expose-headers']).toContain('x-request-id');
    expect(res.headers.vary).toMatch(/Origin/);
  });

  it('gives an unlisted origin nothing, and every response varies on Origin', async () => {
    const res = await request(h.app).get('/api/v1/me').set('Origin', EVIL_ORIGIN);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    expect(res.headers.vary).toMatch(/Origin/);
    const noOrigin = await request(h.app).get('/api/v1/me');
    expect(noOrigin.headers.vary).toMatch(/Origin/);
  });
});
