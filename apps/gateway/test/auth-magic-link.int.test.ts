import { createHash } from 'node:crypto';
import request from 'supertest';
import {
  APP_ORIGIN,
  EVIL_ORIGIN,
  PUBLIC_URL,
  sessionCookieOf,
  uniqueEmail,
  useIdentityHarness,
} from './support/identity-harness';

const h = useIdentityHarness();

const SENT = { message: 'if the address can sign in, a link has been sent' };
const ANY_ID = expect.any(String);

let ipCounter = 0;
/** Each call from its own client address unless one is given, so limits never leak between tests. */
function requestLink(body: object, ip = `10.9.${Math.floor(ipCounter / 250)}.${(ipCounter++ % 250) + 1}`) {
  return request(h.app).post('/api/v1/auth/request-magic-link').set('X-Forwarded-For', ip).send(body);
}

function verify(code: string | null) {
  return request(h.app).post('/api/v1/auth/verify-code').send({ code });
}

describe('request-magic-link', () => {
  it('answers 202 with the same body for a new and a known address, and mails a link to each', async () => {
    const known = await h.signIn();
    const fresh = uniqueEmail('fresh');
    const a = await requestLink({ email: known.email });
    const b = await requestLink({ email: fresh });
    expect(a.status).toBe(202);
    expect(b.status).toBe(202);
    expect(a.body).toEqual(SENT);
    expect(b.body).toEqual(SENT);
    expect((await h.nextLink(known.email)).origin).toBe(PUBLIC_URL);
    // Without a redirect_url the link opens the web console, which posts the code itself.
    expect((await h.nextLink(fresh)).pathname).toBe('/');
  });

  it('stores only the SHA-256 of the code, with a TTL, and a 256-bit base64url code', async () => {
    const email = uniqueEmail();
    await requestLink({ email });
    const code = (await h.nextLink(email)).searchParams.get('code') ?? '';
    expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const hash = createHash('sha256').update(code).digest('hex');
    const stored = await h.kv.get(`magic-link:code:${hash}`);
    expect(stored).not.toBeNull();
    expect(stored).not.toContain(code);
    expect(await h.kv.get(`magic-link:code:${code}`)).toBeNull();
  });

  it('lower-cases the address so the same person gets the same account', async () => {
    const email = uniqueEmail('Mixed');
    await requestLink({ email: email.toUpperCase() });
    const code = (await h.nextLink(email.toLowerCase())).searchParams.get('code');
    const res = await verify(code);
    expect(res.body.user.email).toBe(email.toLowerCase());
  });

  it('refuses a redirect_url outside the trusted origins with 400', async () => {
    const res = await requestLink({ email: uniqueEmail(), redirect_url: `${EVIL_ORIGIN}/steal` });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: 'redirect_url is not allowed',
      code: 'invalid_redirect_url',
      request_id: ANY_ID,
    });
  });

  it('rejects a malformed body with a JSON error', async () => {
    const missing = await requestLink({});
    expect(missing.status).toBe(422);
    expect(missing.body).toMatchObject({ error: 'deserialization error', request_id: ANY_ID });
    const bad = await requestLink({ email: 'not-an-address' });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error: 'validation failed', request_id: ANY_ID });
    const broken = await request(h.app)
      .post('/api/v1/auth/request-magic-link')
      .set('content-type', 'application/json')
      .send('{"email":');
    expect(broken.status).toBe(422);
    expect(broken.body).toMatchObject({ error: 'deserialization error', request_id: ANY_ID });
  });

  it('limits links for one address from one client address: the 6th in 15 minutes is 429 with Retry-After', async () => {
    const email = uniqueEmail('limited');
    for (let i = 0; i < 5; i += 1) expect((await requestLink({ email }, '10.1.0.1')).status).toBe(202);
    const res = await requestLink({ email }, '10.1.0.1');
    expect(res.status).toBe(429);
    expect(res.body).toEqual({ error: 'rate_limited', code: 'rate_limited', request_id: ANY_ID });
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    // Another client address asking for the same mailbox has its own share.
    expect((await requestLink({ email }, '10.1.0.2')).status).toBe(202);
  });

  it('bounds the mail strangers send to one address, without blocking its owner where they signed in', async () => {
    const email = uniqueEmail('owner');
    const ownerIp = '10.1.1.1';
    // The owner signed in from their usual address once.
    expect((await requestLink({ email }, ownerIp)).status).toBe(202);
    const code = (await h.nextLink(email)).searchParams.get('code');
    const signedIn = await request(h.app)
      .post('/api/v1/auth/verify-code')
      .set('X-Forwarded-For', ownerIp)
      .send({ code });
    expect(signedIn.status).toBe(200);
    // Strangers from five addresses use up the mailbox's cap of 20 an hour (the owner's first
    // link counted: it came before that address was known).
    let accepted = 0;
    for (let i = 0; i < 5; i += 1)
      for (let j = 0; j < 5; j += 1)
        if ((await requestLink({ email }, `10.1.2.${i}`)).status === 202) accepted += 1;
    expect(accepted).toBe(19);
    const stranger = await requestLink({ email }, '10.1.2.99');
    expect(stranger.status).toBe(429);
    // The owner, from the address they signed in from, still gets a link.
    expect((await requestLink({ email }, ownerIp)).status).toBe(202);
  });

  it('limits links per IP across addresses', async () => {
    const ip = '10.2.0.1';
    for (let i = 0; i < 30; i += 1)
      expect((await requestLink({ email: uniqueEmail('ip') }, ip)).status).toBe(202);
    const res = await requestLink({ email: uniqueEmail('ip') }, ip);
    expect(res.status).toBe(429);
    expect(res.body.error).toBe('rate_limited');
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
  });
});

describe('following the link from the mail', () => {
  it('opens a confirm page whose form signs in (the code is not used by the GET)', async () => {
    const email = uniqueEmail('browser');
    await requestLink({ email });
    const link = await h.nextLink(email);
    // Links mailed before the console existed still open the confirm page.
    const page = await request(h.app).get(`/api/v1/auth/magic-link${link.search}`);
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/text\/html/);
    expect(page.headers['content-security-policy']).toContain("default-src 'none'");
    const action = /<form method="post" action="([^"]+)"/.exec(page.text)?.[1];
    const code = /name="code" value="([^"]+)"/.exec(page.text)?.[1];
    expect(action).toBe('/api/v1/auth/verify-code');
    expect(code).toBe(link.searchParams.get('code'));

    const signedIn = await request(h.app)
      .post(action ?? '')
      .set('Origin', PUBLIC_URL)
      .type('form')
      .send({ code });
    expect(signedIn.status).toBe(200);
    expect(signedIn.text).toContain('Signed in');
    expect(sessionCookieOf(signedIn)).toBeDefined();
  });

  it('carries redirect_url as a signed state and redirects there after sign-in', async () => {
    const email = uniqueEmail('redirect');
    const target = `${APP_ORIGIN}/welcome?tab=keys`;
    await requestLink({ email, redirect_url: target });
    const link = await h.nextLink(email);
    const state = link.searchParams.get('state') ?? '';
    expect(state.split('.')).toHaveLength(3);
    expect(link.href).not.toContain(encodeURIComponent(target));

    const page = await request(h.app).get(`${link.pathname}${link.search}`);
    expect(page.headers['content-security-policy']).toContain(APP_ORIGIN);
    const res = await request(h.app)
      .post('/api/v1/auth/verify-code')
      .set('Origin', PUBLIC_URL)
      .type('form')
      .send({ code: link.searchParams.get('code'), state });
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe(target);
    expect(sessionCookieOf(res)).toBeDefined();
  });

  it('ignores a tampered state: signs in but does not redirect', async () => {
    const email = uniqueEmail('tamper');
    await requestLink({ email, redirect_url: `${APP_ORIGIN}/ok` });
    const link = await h.nextLink(email);
    const [header, , signature] = (link.searchParams.get('state') ?? '').split('.');
    const forged = Buffer.from(JSON.stringify({ redirect_url: `${EVIL_ORIGIN}/x` })).toString('base64url');
    const res = await request(h.app)
      .post('/api/v1/auth/verify-code')
      .type('form')
      .send({ code: link.searchParams.get('code'), state: `${header}.${forged}.${signature}` });
    expect(res.status).toBe(200);
    expect(res.headers.location).toBeUndefined();
  });

  it('answers a malformed link with a 400 page', async () => {
    const res = await request(h.app).get('/api/v1/auth/magic-link?code=%3Cscript%3E');
    expect(res.status).toBe(400);
    expect(res.text).not.toContain('<script>');
  });
});

describe('verify-code', () => {
  it('creates the user on first sign-in and returns user and session expiry', async () => {
    const email = uniqueEmail('first');
    expect(await h.prisma.user.findUnique({ where: { email } })).toBeNull();
    await requestLink({ email });
    const res = await verify((await h.nextLink(email)).searchParams.get('code'));
    expect(res.status).toBe(200);
    const user = await h.prisma.user.findUniqueOrThrow({ where: { email } });
    expect(res.body).toEqual({
      user: { id: user.id, email, created_at: user.createdAt.toISOString() },
      session: { expires_at: expect.any(String) },
    });
  });

  it('a code works once: reuse is 400 invalid or expired code', async () => {
    const email = uniqueEmail('reuse');
    await requestLink({ email });
    const code = (await h.nextLink(email)).searchParams.get('code');
    expect((await verify(code)).status).toBe(200);
    const again = await verify(code);
    expect(again.status).toBe(400);
    expect(again.body).toEqual({
      error: 'invalid or expired code',
      code: 'invalid_code',
      request_id: ANY_ID,
    });
  });

  it('two concurrent verifies of one code give exactly one session', async () => {
    const email = uniqueEmail('race');
    await requestLink({ email });
    const code = (await h.nextLink(email)).searchParams.get('code');
    const results = await Promise.all([verify(code), verify(code)]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 400]);
    const user = await h.prisma.user.findUniqueOrThrow({ where: { email } });
    expect(await h.prisma.session.count({ where: { userId: user.id } })).toBe(1);
  });

  it('an expired code is 400 invalid or expired code', async () => {
    const email = uniqueEmail('expired');
    await requestLink({ email });
    const code = (await h.nextLink(email)).searchParams.get('code');
    h.clock.advance(15 * 60 * 1000 + 1);
    const res = await verify(code);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'invalid or expired code', code: 'invalid_code', request_id: ANY_ID });
  });

  it('an unknown code is 400 invalid or expired code', async () => {
    const res = await verify('A'.repeat(43));
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'invalid or expired code', code: 'invalid_code', request_id: ANY_ID });
  });

  it('refuses a browser request from a foreign Origin (login CSRF)', async () => {
    const res = await request(h.app)
      .post('/api/v1/auth/verify-code')
      .set('Origin', EVIL_ORIGIN)
      .send({ code: 'x' });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'csrf_origin', code: 'csrf_origin', request_id: ANY_ID });
  });

  it('rate limits failed attempts per IP: after 10 failures wrong codes get 429, a valid code still signs in', async () => {
    const ip = '10.3.0.1';
    const attempt = (code: string | null) =>
      request(h.app).post('/api/v1/auth/verify-code').set('X-Forwarded-For', ip).send({ code });
    for (let i = 0; i < 10; i += 1) expect((await attempt(`wrong-code-${i}-padding`)).status).toBe(400);
    const refused = await attempt('wrong-code-10-padding');
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ error: 'rate_limited', code: 'rate_limited', request_id: ANY_ID });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    // Someone else behind the same address (NAT, or a proxy with TRUST_PROXY_HOPS unset) is not locked out.
    const email = uniqueEmail('neighbour');
    await requestLink({ email });
    const res = await attempt((await h.nextLink(email)).searchParams.get('code'));
    expect(res.status).toBe(200);
    expect(res.body.user.email).toBe(email);
  });

  it('limits attempts per code: the 6th try of one code in 15 minutes is 429, from any address', async () => {
    const code = `replayed-code-${Date.now()}-padding`;
    for (let i = 0; i < 5; i += 1) {
      const res = await request(h.app)
        .post('/api/v1/auth/verify-code')
        .set('X-Forwarded-For', `10.4.0.${i + 1}`)
        .send({ code });
      expect(res.status).toBe(400);
    }
    const sixth = await request(h.app)
      .post('/api/v1/auth/verify-code')
      .set('X-Forwarded-For', '10.4.1.1')
      .send({ code });
    expect(sixth.status).toBe(429);
    expect(sixth.body).toEqual({ error: 'rate_limited', code: 'rate_limited', request_id: ANY_ID });
  });
});
