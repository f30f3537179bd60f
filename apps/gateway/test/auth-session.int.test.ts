import { createHash } from 'node:crypto';
import request from 'supertest';
import {
  APP_ORIGIN,
  EVIL_ORIGIN,
  OWN_ORIGIN,
  uniqueEmail,
  useIdentityHarness,
} from './support/identity-harness';

const h = useIdentityHarness();

const DAY = 24 * 60 * 60 * 1000;
const ANY_ID = expect.any(String);

function setCookieLine(res: request.Response): string {
  const raw = res.headers['set-cookie'] as unknown as string[] | undefined;
  return raw?.find((c) => c.startsWith('gw_session=')) ?? '';
}

async function verifyFresh(app = h.app): Promise<request.Response> {
  const email = uniqueEmail('cookie');
  await request(app)
    .post('/api/v1/auth/request-magic-link')
    .set('X-Forwarded-For', '10.50.0.1')
    .send({ email });
  const code = (await h.nextLink(email)).searchParams.get('code');
  return request(app).post('/api/v1/auth/verify-code').send({ code });
}

describe('session cookie', () => {
  it('is HttpOnly, SameSite=Lax, Path=/, Secure, with a 30-day Max-Age', async () => {
    const line = setCookieLine(await verifyFresh());
    expect(line).toMatch(/^gw_session=[A-Za-z0-9_-]{43};/);
    expect(line).toContain('HttpOnly');
    expect(line).toContain('SameSite=Lax');
    expect(line).toContain('Path=/');
    expect(line).toContain('Secure');
    expect(line).toContain(`Max-Age=${30 * 24 * 60 * 60}`);
  });

  it('drops Secure only when SESSION_COOKIE_SECURE=false', async () => {
    const plain = await h.startInstance({ SESSION_COOKIE_SECURE: 'false' });
    const line = setCookieLine(await verifyFresh(plain.app));
    expect(line).toContain('HttpOnly');
    expect(line).not.toContain('Secure');
  });

  it('the session row holds only the SHA-256 of the token', async () => {
    const { token, userId } = await h.signIn();
    const rows = await h.prisma.session.findMany({ where: { userId } });
    expect(rows).toHaveLength(1);
    expect(rows[0]?.tokenHash).toBe(createHash('sha256').update(token).digest('hex'));
    expect(JSON.stringify(rows)).not.toContain(token);
  });
});

describe('GET /api/v1/auth/session', () => {
  it('returns user id, email, expiry and creation time', async () => {
    const { cookie, userId, email } = await h.signIn();
    const res = await request(h.app).get('/api/v1/auth/session').set('Cookie', cookie);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      user_id: userId,
      email,
      expires_at: expect.any(String),
      created_at: expect.any(String),
    });
    const expiresIn = Date.parse(res.body.expires_at) - h.clock.now();
    expect(expiresIn).toBeGreaterThan(29 * DAY);
  });

  it('without a cookie, or with an unknown one, is 401 missing_authentication', async () => {
    for (const cookie of [undefined, 'gw_session=unknown-token-value']) {
      const req = request(h.app).get('/api/v1/auth/session');
      const res = await (cookie ? req.set('Cookie', cookie) : req);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({
        error: 'missing_authentication',
        code: 'missing_authentication',
        request_id: ANY_ID,
      });
    }
  });

  it('slides the expiry forward on use and re-issues the cookie', async () => {
    const { cookie } = await h.signIn();
    const before = (await request(h.app).get('/api/v1/auth/session').set('Cookie', cookie)).body.expires_at;
    h.clock.advance(2 * DAY);
    const res = await request(h.app).get('/api/v1/auth/session').set('Cookie', cookie);
    expect(res.status).toBe(200);
    expect(Date.parse(res.body.expires_at) - Date.parse(before)).toBeGreaterThanOrEqual(2 * DAY - 1000);
    expect(setCookieLine(res)).toContain(`Max-Age=${30 * 24 * 60 * 60}`);
  });

  it('an unused session expires after 30 days', async () => {
    const { cookie } = await h.signIn();
    h.clock.advance(30 * DAY + 1000);
    const res = await request(h.app).get('/api/v1/auth/session').set('Cookie', cookie);
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('missing_authentication');
  });
});

describe('POST /api/v1/auth/logout', () => {
  it('revokes the session and clears the cookie', async () => {
    const { cookie, userId } = await h.signIn();
    const res = await request(h.app)
      .post('/api/v1/auth/logout')
      .set('Cookie', cookie)
      .set('Origin', OWN_ORIGIN);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ logged_out: true });
    expect(setCookieLine(res)).toMatch(/^gw_session=;.*Expires=Thu, 01 Jan 1970/);
    const row = await h.prisma.session.findFirstOrThrow({ where: { userId } });
    expect(row.revokedAt).not.toBeNull();
    const after = await request(h.app).get('/api/v1/auth/session').set('Cookie', cookie);
    expect(after.status).toBe(401);
  });

  it('with the cookie but a wrong or missing Origin is 403 csrf_origin and keeps the session', async () => {
    const { cookie } = await h.signIn();
    for (const origin of [EVIL_ORIGIN, undefined]) {
      const req = request(h.app).post('/api/v1/auth/logout').set('Cookie', cookie);
      const res = await (origin ? req.set('Origin', origin) : req);
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: 'csrf_origin', code: 'csrf_origin', request_id: ANY_ID });
    }
    expect((await request(h.app).get('/api/v1/auth/session').set('Cookie', cookie)).status).toBe(200);
  });

  it('accepts an Origin from GATEWAY_CORS_ORIGINS', async () => {
    const { cookie } = await h.signIn();
    const res = await request(h.app)
      .post('/api/v1/auth/logout')
      .set('Cookie', cookie)
      .set('Origin', APP_ORIGIN);
    expect(res.status).toBe(200);
  });

  it('is idempotent without a session', async () => {
    const res = await request(h.app).post('/api/v1/auth/logout');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ logged_out: true });
  });
});

describe('GET /api/v1/me', () => {
  it('answers with the profile for a session', async () => {
    const { cookie, userId, email } = await h.signIn();
    const res = await request(h.app).get('/api/v1/me').set('Cookie', cookie);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: userId, email, created_at: expect.any(String), auth: 'session' });
  });

  it('answers with the profile for an API key', async () => {
    const { cookie, userId, email } = await h.signIn();
    const { key } = await h.createKey(cookie);
    const res = await request(h.app).get('/api/v1/me').set('x-api-key', key);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: userId, email, created_at: expect.any(String), auth: 'api_key' });
  });

  it('with neither is 401 missing_authentication', async () => {
    const res = await request(h.app).get('/api/v1/me');
    expect(res.status).toBe(401);
    expect(res.body).toEqual({
      error: 'missing_authentication',
      code: 'missing_authentication',
      request_id: ANY_ID,
    });
  });

  it('with an unknown API key is 401 invalid api key', async () => {
    const res = await request(h.app)
      .get('/api/v1/me')
      .set('x-api-key', `gw_${'0'.repeat(43)}`);
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'invalid api key', code: 'invalid_api_key', request_id: ANY_ID });
  });
});
