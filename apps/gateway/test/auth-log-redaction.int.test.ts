import request from 'supertest';
import { OWN_ORIGIN, uniqueEmail, useIdentityHarness } from './support/identity-harness';

const h = useIdentityHarness({ LOG_LEVEL: 'trace' });

describe('log redaction over a whole sign-in and key life cycle', () => {
  it('no code, cookie, session token or API key appears in any log line', async () => {
    const email = uniqueEmail('logs');
    await request(h.app).post('/api/v1/auth/request-magic-link').send({ email });
    const link = await h.nextLink(email);
    const code = link.searchParams.get('code') ?? '';
    // The link itself is fetched, so its query string reaches the access log.
    expect((await request(h.app).get(`${link.pathname}${link.search}`)).status).toBe(200);
    const verified = await request(h.app).post('/api/v1/auth/verify-code').send({ code });
    const setCookie = (verified.headers['set-cookie'] as unknown as string[])[0] ?? '';
    const cookie = setCookie.split(';')[0] ?? '';
    const token = cookie.split('=')[1] ?? '';
    const reused = await request(h.app).post('/api/v1/auth/verify-code').send({ code });
    expect(reused.status).toBe(400);

    const created = await request(h.app)
      .post('/api/v1/auth/api-keys')
      .set('Cookie', cookie)
      .set('Origin', OWN_ORIGIN)
      .send({ name: 'logged' });
    const key: string = created.body.key;
    await request(h.app).get('/api/v1/me').set('x-api-key', key);
    await request(h.app).get('/api/v1/me').set('Authorization', `Bearer ${key}`);
    await request(h.app).get(`/api/v1/me?api_key=${key}`);
    await request(h.app)
      .post('/api/v1/auth/api-keys/revoke')
      .set('Cookie', cookie)
      .set('Origin', OWN_ORIGIN)
      .send({ key_id: created.body.key_id });
    await request(h.app).get('/api/v1/me').set('x-api-key', key);
    await request(h.app).post('/api/v1/auth/logout').set('Cookie', cookie).set('Origin', OWN_ORIGIN);

    const text = h.logs.text();
    // The test must have produced access-log lines, or it proves nothing.
    expect(h.logs.lines.length).toBeGreaterThan(8);
    expect(text).toContain('/api/v1/auth/verify-code');
    expect(code.length).toBeGreaterThan(20);
    expect(token.length).toBeGreaterThan(20);
    expect(text).not.toContain(code);
    expect(text).not.toContain(token);
    expect(text).not.toContain(key);
    expect(text).not.toContain(key.slice(3, 20));
  });
});
