import { AppError, errorHandler } from '@platform/errors';
import { requestId } from '@platform/logging';
import express from 'express';
import request from 'supertest';
import { requireApiKeyAndLimits } from '../src/admission/key-and-limits';
import { requireApiKey } from '../src/auth/api-key-auth';
import { hashApiKey } from '../src/auth/api-key-hash';
import { requireTrustedOrigin } from '../src/auth/csrf';
import {
  APP_ORIGIN,
  EVIL_ORIGIN,
  type Instance,
  OWN_ORIGIN,
  SECRET,
  useIdentityHarness,
} from './support/identity-harness';

const h = useIdentityHarness();

const ANY_ID = expect.any(String);

/** An app whose only route takes x-api-key, like the AI endpoints, on one instance's deps. */
function keyOnlyApp(instance: Pick<Instance, 'deps'>) {
  const app = express();
  app.use(requestId());
  app.post('/ai-like', requireApiKey(instance.deps), requireTrustedOrigin(instance.deps), (_req, res) => {
    res.json({ auth: res.locals.auth });
  });
  app.use(errorHandler());
  return app;
}

function create(cookie: string, body: object, origin: string | null = OWN_ORIGIN) {
  const req = request(h.app).post('/api/v1/auth/api-keys').set('Cookie', cookie);
  return (origin ? req.set('Origin', origin) : req).send(body);
}

function revoke(cookie: string, keyId: string, app = h.app) {
  return request(app)
    .post('/api/v1/auth/api-keys/revoke')
    .set('Cookie', cookie)
    .set('Origin', OWN_ORIGIN)
    .send({ key_id: keyId });
}

function list(cookie: string) {
  return request(h.app).get('/api/v1/auth/api-keys/list').set('Cookie', cookie);
}

describe('creating keys: (none) -> active', () => {
  it('returns 201 with the plaintext key once, default scope ai, and stores only a keyed hash', async () => {
    const { cookie, userId } = await h.signIn();
    const res = await create(cookie, { name: 'ci' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      key: expect.stringMatching(/^gw_[0-9A-Za-z]{43}$/),
      key_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      key_prefix: res.body.key.slice(0, 12),
      name: 'ci',
      scope: 'ai',
    });
    const row = await h.prisma.apiKey.findFirstOrThrow({ where: { userId } });
    expect(row.hash).toBe(hashApiKey(res.body.key, SECRET));
    expect(JSON.stringify(row)).not.toContain(res.body.key);
  });

  it('refuses names that are not 1 to 64 letters or digits, and unknown scopes', async () => {
    const { cookie } = await h.signIn();
    for (const body of [
      { name: 'has space' },
      { name: '' },
      { name: 'a'.repeat(65) },
      { name: 'ok', scope: 'admin' },
    ]) {
      const res = await create(cookie, body);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ error: 'validation failed', request_id: ANY_ID });
    }
    const missing = await create(cookie, {});
    expect(missing.status).toBe(422);
    expect(missing.body).toMatchObject({ error: 'deserialization error', request_id: ANY_ID });
  });

  it('a 6th active key is 400 maximum_keys; revoking one makes room', async () => {
    const { cookie } = await h.signIn();
    const keys = [];
    for (let i = 0; i < 5; i += 1) keys.push(await h.createKey(cookie, `k${i}`));
    const sixth = await create(cookie, { name: 'k5' });
    expect(sixth.status).toBe(400);
    expect(sixth.body).toEqual({ error: 'maximum_keys', code: 'maximum_keys', request_id: ANY_ID });
    expect((await revoke(cookie, keys[0]?.key_id ?? '')).status).toBe(200);
    expect((await create(cookie, { name: 'k5' })).status).toBe(201);
  });

  it('10 concurrent creates from 0 keys: exactly 5 succeed and 5 get maximum_keys', async () => {
    const { cookie, userId } = await h.signIn();
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => create(cookie, { name: `c${i}` })),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(5);
    const refused = results.filter((r) => r.status === 400);
    expect(refused).toHaveLength(5);
    for (const r of refused) expect(r.body.error).toBe('maximum_keys');
    expect(await h.prisma.apiKey.count({ where: { userId, revokedAt: null } })).toBe(5);
  });

  it('needs a session: without one it is 401 missing_authentication', async () => {
    const res = await request(h.app)
      .post('/api/v1/auth/api-keys')
      .set('Origin', OWN_ORIGIN)
      .send({ name: 'x' });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({
      error: 'missing_authentication',
      code: 'missing_authentication',
      request_id: ANY_ID,
    });
  });
});

describe('CSRF on key creation and revocation', () => {
  it('a wrong Origin is 403 csrf_origin and creates nothing', async () => {
    const { cookie, userId } = await h.signIn();
    const res = await create(cookie, { name: 'x' }, EVIL_ORIGIN);
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'csrf_origin', code: 'csrf_origin', request_id: ANY_ID });
    expect(await h.prisma.apiKey.count({ where: { userId } })).toBe(0);
  });

  it('a missing Origin is 403 csrf_origin', async () => {
    const { cookie } = await h.signIn();
    const res = await create(cookie, { name: 'x' }, null);
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'csrf_origin', code: 'csrf_origin', request_id: ANY_ID });
  });

  it('the gateway origin and GATEWAY_CORS_ORIGINS are allowed', async () => {
    const { cookie } = await h.signIn();
    expect((await create(cookie, { name: 'own' }, OWN_ORIGIN)).status).toBe(201);
    expect((await create(cookie, { name: 'app' }, APP_ORIGIN)).status).toBe(201);
  });

  it('revocation with a wrong Origin is 403 and the key keeps working', async () => {
    const { cookie } = await h.signIn();
    const { key, key_id } = await h.createKey(cookie);
    const res = await request(h.app)
      .post('/api/v1/auth/api-keys/revoke')
      .set('Cookie', cookie)
      .set('Origin', EVIL_ORIGIN)
      .send({ key_id });
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('csrf_origin');
    expect((await request(h.app).get('/api/v1/me').set('x-api-key', key)).status).toBe(200);
  });

  it('requests authenticated by x-api-key are exempt', async () => {
    const { cookie } = await h.signIn();
    const { key } = await h.createKey(cookie);
    const res = await request(keyOnlyApp(h))
      .post('/ai-like')
      .set('x-api-key', key)
      .set('Origin', EVIL_ORIGIN);
    expect(res.status).toBe(200);
  });
});

describe('listing keys', () => {
  it('shows own keys with status, without plaintext or hash', async () => {
    const { cookie } = await h.signIn();
    const other = await h.signIn();
    await h.createKey(other.cookie, 'theirs');
    const a = await h.createKey(cookie, 'first');
    const b = await h.createKey(cookie, 'second');
    await revoke(cookie, a.key_id);
    const res = await list(cookie);
    expect(res.status).toBe(200);
    expect(res.body.keys).toHaveLength(2);
    const byId = Object.fromEntries(res.body.keys.map((k: { key_id: string }) => [k.key_id, k]));
    expect(byId[a.key_id]).toEqual({
      key_id: a.key_id,
      key_prefix: a.key_prefix,
      name: 'first',
      scope: 'ai',
      created_at: expect.any(String),
      last_used_at: null,
      status: 'revoked',
    });
    expect(byId[b.key_id]?.status).toBe('active');
    const text = JSON.stringify(res.body);
    for (const k of [a, b]) expect(text).not.toContain(k.key);
    expect(text).not.toMatch(/[0-9a-f]{64}/);
  });

  it('records last_used_at in a batch after use, not per request', async () => {
    const { cookie } = await h.signIn();
    const { key, key_id } = await h.createKey(cookie);
    for (let i = 0; i < 3; i += 1)
      expect((await request(h.app).get('/api/v1/me').set('x-api-key', key)).status).toBe(200);
    const before = await h.prisma.apiKey.findUniqueOrThrow({ where: { id: key_id } });
    expect(before.lastUsedAt).toBeNull();
    await h.deps.apiKeys.lastUsed.flush();
    const listed = (await list(cookie)).body.keys.find((k: { key_id: string }) => k.key_id === key_id);
    expect(listed.last_used_at).toBe(new Date(h.clock.now()).toISOString());
  });
});

describe('revoking keys: active -> revoked', () => {
  it('revokes an own key; its next request is 401 invalid api key', async () => {
    const { cookie } = await h.signIn();
    const { key, key_id } = await h.createKey(cookie);
    expect((await request(h.app).get('/api/v1/me').set('x-api-key', key)).status).toBe(200);
    const res = await revoke(cookie, key_id);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ key_id, status: 'revoked' });
    const after = await request(h.app).get('/api/v1/me').set('x-api-key', key);
    expect(after.status).toBe(401);
    expect(after.body).toEqual({ error: 'invalid api key', code: 'invalid_api_key', request_id: ANY_ID });
  });

  it('a revoked key is refused at once by a second instance that had it cached', async () => {
    const { cookie } = await h.signIn();
    const { key, key_id } = await h.createKey(cookie);
    const other = await h.startInstance();
    const otherKeyApp = keyOnlyApp(other);
    expect((await request(other.app).get('/api/v1/me').set('x-api-key', key)).status).toBe(200);
    expect((await request(otherKeyApp).post('/ai-like').set('x-api-key', key)).status).toBe(200);

    expect((await revoke(cookie, key_id)).status).toBe(200);

    const viaMe = await request(other.app).get('/api/v1/me').set('x-api-key', key);
    expect(viaMe.status).toBe(401);
    expect(viaMe.body).toEqual({ error: 'invalid api key', code: 'invalid_api_key', request_id: ANY_ID });
    const viaAi = await request(otherKeyApp).post('/ai-like').set('x-api-key', key);
    expect(viaAi.status).toBe(401);
    expect(viaAi.body).toEqual({ error: 'invalid api key', code: 'invalid_api_key', request_id: ANY_ID });
  });

  it('with the limits (requireApiKeyAndLimits): they run for a cached key, its 429 is the answer, and revocation still wins', async () => {
    const { cookie } = await h.signIn();
    const { key, key_id } = await h.createKey(cookie);
    const other = await h.startInstance();
    const seen: string[] = [];
    let refuse = false;
    const app = express();
    app.use(requestId());
    app.post(
      '/ai-limited',
      requireApiKeyAndLimits(other.deps, {
        limits: async (auth) => {
          seen.push(auth.apiKeyId);
          if (refuse) throw new AppError('rate_limited', { headers: { 'Retry-After': '5' } });
        },
      }),
      (_req, res) => {
        res.json({ ok: true });
      },
    );
    app.use(errorHandler());
    expect((await request(app).post('/ai-limited').set('x-api-key', key)).status).toBe(200);
    expect((await request(app).post('/ai-limited').set('x-api-key', key)).status).toBe(200);
    expect(seen).toEqual([key_id, key_id]);
    refuse = true;
    const limited = await request(app).post('/ai-limited').set('x-api-key', key);
    expect(limited.status).toBe(429);
    expect(limited.headers['retry-after']).toBe('5');
    refuse = false;

    expect((await revoke(cookie, key_id)).status).toBe(200);
    const revoked = await request(app).post('/ai-limited').set('x-api-key', key);
    expect(revoked.status).toBe(401);
    expect(revoked.body).toEqual({ error: 'invalid api key', code: 'invalid_api_key', request_id: ANY_ID });
    // An unknown key never reaches the check.
    const before = seen.length;
    const unknown = await request(app)
      .post('/ai-limited')
      .set('x-api-key', `gw_${'x'.repeat(43)}`);
    expect(unknown.status).toBe(401);
    expect(seen).toHaveLength(before);
  });

  it("another user's key is 404 api key not found and stays active", async () => {
    const owner = await h.signIn();
    const intruder = await h.signIn();
    const { key, key_id } = await h.createKey(owner.cookie);
    const res = await revoke(intruder.cookie, key_id);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'api key not found', code: 'api_key_not_found', request_id: ANY_ID });
    expect((await request(h.app).get('/api/v1/me').set('x-api-key', key)).status).toBe(200);
  });

  it('an unknown key id is 404, a malformed one 400, a missing one 422, and revoking twice succeeds', async () => {
    const { cookie } = await h.signIn();
    expect((await revoke(cookie, '00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await revoke(cookie, 'not-a-uuid')).status).toBe(400);
    const missing = await request(h.app)
      .post('/api/v1/auth/api-keys/revoke')
      .set('Cookie', cookie)
      .set('Origin', OWN_ORIGIN)
      .send({});
    expect(missing.status).toBe(422);
    expect(missing.body).toMatchObject({ error: 'deserialization error', request_id: ANY_ID });
    const { key_id } = await h.createKey(cookie);
    expect((await revoke(cookie, key_id)).status).toBe(200);
    expect((await revoke(cookie, key_id)).status).toBe(200);
  });
});

describe('x-api-key authentication', () => {
  it('no header is 401 missing api key; an empty header too', async () => {
    const app = keyOnlyApp(h);
    for (const value of [undefined, '']) {
      const req = request(app).post('/ai-like');
      const res = await (value === undefined ? req : req.set('x-api-key', value));
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'missing api key', code: 'missing_api_key', request_id: ANY_ID });
    }
  });

  it('an unknown, malformed or oversized key is 401 invalid api key', async () => {
    const app = keyOnlyApp(h);
    for (const value of [`gw_${'1'.repeat(43)}`, 'nonsense', 'x'.repeat(5000)]) {
      const res = await request(app).post('/ai-like').set('x-api-key', value);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'invalid api key', code: 'invalid_api_key', request_id: ANY_ID });
    }
  });

  it('a valid key sets res.locals.auth with user, key id and scope', async () => {
    const { cookie, userId } = await h.signIn();
    const { key, key_id } = await h.createKey(cookie);
    const res = await request(keyOnlyApp(h)).post('/ai-like').set('x-api-key', key);
    expect(res.status).toBe(200);
    expect(res.body.auth).toEqual({ kind: 'api_key', userId, apiKeyId: key_id, scope: 'ai' });
  });

  it('closing flushes and a fresh verifier still authenticates', async () => {
    const { cookie } = await h.signIn();
    const { key } = await h.createKey(cookie);
    const instance = await h.startInstance();
    expect((await request(instance.app).get('/api/v1/me').set('x-api-key', key)).status).toBe(200);
    await instance.deps.apiKeys.close();
    expect((await request(instance.app).get('/api/v1/me').set('x-api-key', key)).status).toBe(200);
  });
});
