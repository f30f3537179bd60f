import { createHash, randomUUID } from 'node:crypto';
import { type OidcTestProvider, perTestFile, signInAtProvider, startOidcProvider } from '@platform/testing';
import request from 'supertest';
import { issueSignInCode } from '../src/sign-in/magic-link';
import {
  type IdentityHarness,
  OWN_ORIGIN,
  PUBLIC_URL,
  sessionCookieOf,
  startIdentityHarness,
} from './support/identity-harness';

/**
 * Item 4 of issue 42: OpenID Connect sign-in against a real provider
 * (oidc-provider from npm, in a child process on 127.0.0.1), driven through
 * the authorization code flow with PKCE: its login and consent forms are
 * posted as a browser would.
 */
const REDIRECT_URI = `${PUBLIC_URL}/api/v1/auth/sso/callback`;
const CLIENT = { client_id: 'gateway', client_secret: 'gateway-client-secret-0123456789' };
const TEAM_ID = randomUUID();
const ANY_ID = expect.any(String);

type World = IdentityHarness & { provider: OidcTestProvider };
/** Every authorization code the provider handed out in this file (none may reach the log). */
const codesSeen: string[] = [];

const h = perTestFile<World>(async () => {
  const provider = await startOidcProvider({
    clients: [{ ...CLIENT, redirect_uris: [REDIRECT_URI] }],
    accounts: {
      'lead@corp.test': { groups: ['eng-admins', 'eng'] },
      'dev@corp.test': { groups: ['eng'] },
      'unverified@corp.test': { email_verified: false },
    },
  });
  try {
    const harness = await startIdentityHarness({
      OIDC_ISSUER: provider.issuer,
      OIDC_CLIENT_ID: CLIENT.client_id,
      OIDC_CLIENT_SECRET: CLIENT.client_secret,
      OIDC_SCOPES: 'openid email groups',
      OIDC_ALLOWED_DOMAINS: 'corp.test',
      OIDC_ROLE_CLAIM: 'groups',
      OIDC_ROLE_MAP: `eng-admins=${TEAM_ID}:admin,eng=${TEAM_ID}:member`,
    });
    return {
      ...harness,
      provider,
      async close() {
        await harness.close();
        await provider.close();
      },
    };
  } catch (err) {
    await provider.close();
    throw err;
  }
});

/** The `gw_sso_state` binding cookie the start set. */
function stateCookieOf(res: request.Response): string {
  const raw = res.headers['set-cookie'] as unknown as string[];
  const line = raw.find((c) => c.startsWith('gw_sso_state='));
  if (!line) throw new Error('no state cookie');
  return line.split(';')[0] ?? '';
}

/** Start at the gateway, sign in at the provider as `login`: the callback URL and this browser's cookie. */
async function throughProvider(login: string): Promise<{ callback: URL; cookie: string }> {
  const start = await request(h.app).get('/api/v1/auth/sso/start');
  expect(start.status).toBe(302);
  const location = new URL(start.headers.location ?? '');
  expect(location.origin).toBe(h.provider.issuer);
  expect(location.searchParams.get('code_challenge_method')).toBe('S256');
  expect(location.searchParams.get('nonce')).toEqual(expect.any(String));
  const callback = await signInAtProvider(location.href, { login, redirectUri: REDIRECT_URI });
  codesSeen.push(callback.searchParams.get('code') ?? '');
  return { callback, cookie: stateCookieOf(start) };
}

function finish(callback: URL, cookie: string) {
  return request(h.app).get(`${callback.pathname}${callback.search}`).set('Cookie', cookie);
}

async function auditOf(
  cookie: string,
): Promise<Array<{ action: string; actor_kind: string; after: unknown }>> {
  const res = await request(h.app).get('/api/v1/audit').set('Cookie', cookie);
  expect(res.status).toBe(200);
  return res.body.events;
}

beforeAll(async () => {
  // The team OIDC_ROLE_MAP names, owned by someone who signed in by magic link (another domain).
  const owner = await h.signIn();
  const subject = await h.prisma.user.create({ data: { email: `team+${TEAM_ID}@teams.invalid` } });
  await h.prisma.team.create({ data: { id: TEAM_ID, name: 'Engineering', subjectUserId: subject.id } });
  await h.prisma.teamMember.create({ data: { teamId: TEAM_ID, userId: owner.userId, role: 'owner' } });
});

describe('single sign-on through a real OpenID provider', () => {
  it('signs in: creates the user, sets the session cookie, redirects to the console, audits it', async () => {
    const { callback, cookie } = await throughProvider('new.person@corp.test');
    expect(callback.searchParams.get('code')).toEqual(expect.any(String));
    const res = await finish(callback, cookie);
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe(`${PUBLIC_URL}/`);
    const session = sessionCookieOf(res);
    expect(session).toBeDefined();
    const line = (res.headers['set-cookie'] as unknown as string[]).find((c) => c.startsWith('gw_session='));
    expect(line).toMatch(/HttpOnly/i);
    expect(line).toMatch(/SameSite=Lax/i);

    const me = await request(h.app)
      .get('/api/v1/auth/session')
      .set('Cookie', session ?? '');
    expect(me.status).toBe(200);
    expect(me.body.email).toBe('new.person@corp.test');
    expect(await h.prisma.user.count({ where: { email: 'new.person@corp.test' } })).toBe(1);
    const [event] = await auditOf(session ?? '');
    expect(event).toMatchObject({
      action: 'sign_in.sso',
      actor_kind: 'sso',
      after: { issuer: h.provider.issuer },
    });
    // The session works like a magic link's: a write with the gateway's Origin passes the CSRF check.
    const key = await request(h.app)
      .post('/api/v1/auth/api-keys')
      .set('Cookie', session ?? '')
      .set('Origin', OWN_ORIGIN)
      .send({ name: 'sso' });
    expect(key.status).toBe(201);
    const foreign = await request(h.app)
      .post('/api/v1/auth/api-keys')
      .set('Cookie', session ?? '')
      .set('Origin', 'http://evil.test')
      .send({ name: 'sso' });
    expect(foreign.status).toBe(403);
  });

  it('maps the groups claim to team roles: the strongest mapped role, audited in the team log', async () => {
    const lead = await finishAs('lead@corp.test');
    const dev = await finishAs('dev@corp.test');
    const teamsOf = async (cookie: string) =>
      (await request(h.app).get('/api/v1/teams').set('Cookie', cookie)).body.teams;
    expect(await teamsOf(lead)).toEqual([
      expect.objectContaining({ team_id: TEAM_ID, name: 'Engineering', role: 'admin' }),
    ]);
    expect(await teamsOf(dev)).toEqual([
      expect.objectContaining({ team_id: TEAM_ID, name: 'Engineering', role: 'member' }),
    ]);
    // The mapped admin may read the team's audit log: both joins came from SSO.
    const audit = await request(h.app).get(`/api/v1/teams/${TEAM_ID}/audit`).set('Cookie', lead);
    expect(audit.status).toBe(200);
    const joins = (audit.body.events as Array<{ action: string; actor_kind: string; after: unknown }>).filter(
      (e) => e.action === 'member.join',
    );
    expect(joins).toHaveLength(2);
    for (const join of joins) expect(join.actor_kind).toBe('sso');
    expect(joins.map((j) => j.after)).toEqual(
      expect.arrayContaining([
        { role: 'admin', via: 'sso' },
        { role: 'member', via: 'sso' },
      ]),
    );
    // Signing in again changes nothing: no second join.
    await finishAs('dev@corp.test');
    const again = await request(h.app).get(`/api/v1/teams/${TEAM_ID}/audit`).set('Cookie', lead);
    expect(again.body.events.filter((e: { action: string }) => e.action === 'member.join')).toHaveLength(2);
  });

  it('refuses an address outside OIDC_ALLOWED_DOMAINS: no session, no user', async () => {
    const { callback, cookie } = await throughProvider('someone@other.test');
    const res = await finish(callback, cookie);
    expect(res.status).toBe(403);
    expect(res.body).toEqual({
      error: 'e-mail domain not allowed for single sign-on',
      code: 'sso_domain_not_allowed',
      request_id: ANY_ID,
      details: [{ path: 'id_token.email', message: 'other.test is not on OIDC_ALLOWED_DOMAINS' }],
    });
    expect(sessionCookieOf(res)).toBeUndefined();
    expect(await h.prisma.user.count({ where: { email: 'someone@other.test' } })).toBe(0);
  });

  it('refuses an address the provider has not verified', async () => {
    const { callback, cookie } = await throughProvider('unverified@corp.test');
    const res = await finish(callback, cookie);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'sso_failed', details: [{ path: 'id_token.email_verified' }] });
    expect(sessionCookieOf(res)).toBeUndefined();
  });

  it('refuses a tampered state, and a state from another browser', async () => {
    const { callback, cookie } = await throughProvider('dev@corp.test');
    const tampered = new URL(callback);
    const state = callback.searchParams.get('state') ?? '';
    tampered.searchParams.set('state', `${state.slice(0, -2)}${state.endsWith('AA') ? 'BB' : 'AA'}`);
    const res = await finish(tampered, cookie);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      error: 'invalid or expired single sign-on state',
      code: 'sso_invalid_state',
      request_id: ANY_ID,
    });
    expect(sessionCookieOf(res)).toBeUndefined();

    // The attacker's own flow, finished in the victim's browser (login CSRF): the cookie differs.
    const other = await throughProvider('dev@corp.test');
    const victim = await finish(other.callback, cookie);
    expect(victim.status).toBe(400);
    expect(victim.body.code).toBe('sso_invalid_state');
    // Without any cookie.
    const bare = await request(h.app).get(`${other.callback.pathname}${other.callback.search}`);
    expect(bare.body.code).toBe('sso_invalid_state');
  });

  it('refuses a replayed code: the same callback again, and the code under a fresh state', async () => {
    const { callback, cookie } = await throughProvider('dev@corp.test');
    expect((await finish(callback, cookie)).status).toBe(303);
    // The state is spent with the first use.
    const replay = await finish(callback, cookie);
    expect(replay.status).toBe(400);
    expect(replay.body.code).toBe('sso_invalid_state');
    // A fresh flow's state and cookie around the old code: the provider refuses the code.
    const fresh = await request(h.app).get('/api/v1/auth/sso/start');
    const freshState = new URL(fresh.headers.location ?? '').searchParams.get('state') ?? '';
    const forged = new URL(callback);
    forged.searchParams.set('state', freshState);
    const res = await finish(forged, stateCookieOf(fresh));
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      error: 'single sign-on failed',
      code: 'sso_failed',
      request_id: ANY_ID,
      details: [{ path: 'code' }],
    });
    expect(res.body.details[0].message).toContain('invalid_grant');
    expect(sessionCookieOf(res)).toBeUndefined();
  });

  it('refuses an ID token whose nonce is not the one this sign-in sent', async () => {
    const { callback, cookie } = await throughProvider('dev@corp.test');
    const state = callback.searchParams.get('state') ?? '';
    const key = `sso:flow:${createHash('sha256').update(state).digest('hex')}`;
    const stored = JSON.parse((await h.kv.get(key)) ?? '{}');
    await h.kv.set(key, JSON.stringify({ ...stored, nonce: 'another-nonce-0123456789' }), 60_000);
    const res = await finish(callback, cookie);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'sso_failed', details: [{ path: 'id_token.nonce' }] });
  });

  it('refuses an authorization response naming another issuer', async () => {
    const { callback, cookie } = await throughProvider('dev@corp.test');
    callback.searchParams.set('iss', 'http://127.0.0.1:1');
    const res = await finish(callback, cookie);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('sso_failed');
    expect(sessionCookieOf(res)).toBeUndefined();
  });

  it('scopes the state cookie to the SSO routes, under a path prefix too', async () => {
    const cookieLine = (res: request.Response) =>
      (res.headers['set-cookie'] as unknown as string[]).find((c) => c.startsWith('gw_sso_state=')) ?? '';
    const line = cookieLine(await request(h.app).get('/api/v1/auth/sso/start'));
    expect(line).toMatch(/; Path=\/api\/v1\/auth\/sso;/);
    expect(line).toMatch(/HttpOnly/);
    expect(line).toMatch(/SameSite=Lax/);
    expect(line).toMatch(/Max-Age=600/);
    const prefixed = await h.startInstance({ GATEWAY_PUBLIC_URL: `${PUBLIC_URL}/gw` });
    const start = await request(prefixed.app).get('/api/v1/auth/sso/start');
    expect(cookieLine(start)).toMatch(/; Path=\/gw\/api\/v1\/auth\/sso;/);
    const target = new URL(start.headers.location ?? '');
    expect(target.searchParams.get('redirect_uri')).toBe(`${PUBLIC_URL}/gw/api/v1/auth/sso/callback`);
  });

  it('keeps a redirect_url to a trusted origin and refuses any other', async () => {
    const bad = await request(h.app)
      .get('/api/v1/auth/sso/start')
      .query({ redirect_url: 'http://evil.test/x' });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 'invalid_redirect_url', request_id: ANY_ID });
    const start = await request(h.app)
      .get('/api/v1/auth/sso/start')
      .query({ redirect_url: `${PUBLIC_URL}/?tab=keys` });
    const callback = await signInAtProvider(start.headers.location ?? '', {
      login: 'dev@corp.test',
      redirectUri: REDIRECT_URI,
    });
    const res = await finish(callback, stateCookieOf(start));
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe(`${PUBLIC_URL}/?tab=keys`);
  });
});

describe('bad input, a denied consent, an unreachable provider, SSO off', () => {
  it('answers malformed callbacks with JSON errors, never a 5xx', async () => {
    const start = await request(h.app).get('/api/v1/auth/sso/start');
    const cookie = stateCookieOf(start);
    const queries = [
      '',
      '?code=x',
      '?state=',
      '?state=a&state=b',
      `?state=${'A'.repeat(5000)}`,
      '?state[x]=1&code[y]=2',
      '?state=%00%ff&code=%zz',
    ];
    for (const q of queries) {
      const res = await request(h.app).get(`/api/v1/auth/sso/callback${q}`).set('Cookie', cookie);
      expect({ q, status: res.status }).toEqual({ q, status: 400 });
      expect(res.body).toMatchObject({ error: expect.any(String), request_id: ANY_ID });
    }
    const bad = await request(h.app).get('/api/v1/auth/sso/start?redirect_url=a&redirect_url=b');
    expect(bad.status).toBeLessThan(500);
  });

  it("refuses a callback carrying the provider's error (consent denied), naming it", async () => {
    const start = await request(h.app).get('/api/v1/auth/sso/start');
    const state = new URL(start.headers.location ?? '').searchParams.get('state') ?? '';
    const res = await request(h.app)
      .get('/api/v1/auth/sso/callback')
      .query({ error: 'access_denied', state, iss: h.provider.issuer })
      .set('Cookie', stateCookieOf(start));
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      code: 'sso_failed',
      details: [{ path: 'query', message: 'the provider answered access_denied' }],
    });
  });

  it('answers 503 when the provider cannot be reached, and 404 when SSO is off', async () => {
    const down = await h.startInstance({ OIDC_ISSUER: 'http://127.0.0.1:1' });
    const res = await request(down.app).get('/api/v1/auth/sso/start');
    expect(res.status).toBe(503);
    expect(res.body).toEqual({
      error: 'identity provider unavailable',
      code: 'sso_unavailable',
      request_id: ANY_ID,
    });
    const off = await h.startInstance({ OIDC_ISSUER: '' });
    for (const path of ['/api/v1/auth/sso/start', '/api/v1/auth/sso/callback?code=a&state=b']) {
      const r = await request(off.app).get(path);
      expect(r.status).toBe(404);
      expect(r.body).toMatchObject({ error: 'single sign-on is not configured', request_id: ANY_ID });
    }
    expect((await request(off.app).get('/api/v1/config')).body.sso).toBe(false);
  });

  it('never writes the client secret, a code or an ID token to the log', () => {
    const logs = h.logs.text();
    expect(logs).not.toContain(CLIENT.client_secret);
    expect(codesSeen.length).toBeGreaterThan(0);
    // The callbacks were logged (the access log), with their codes masked.
    expect(logs).toContain('/api/v1/auth/sso/callback');
    for (const code of codesSeen) expect(logs).not.toContain(code);
    expect(logs).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}\.eyJ/);
  });
});

describe('magic links for a domain bound to SSO', () => {
  it('refuses the request with a JSON error naming the reason', async () => {
    const res = await request(h.app)
      .post('/api/v1/auth/request-magic-link')
      .set('X-Forwarded-For', '10.77.0.1')
      .send({ email: 'Dev@Corp.test' });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({
      error: 'this e-mail domain signs in through single sign-on',
      code: 'sso_required',
      request_id: ANY_ID,
      details: [{ path: 'email', message: expect.stringContaining('/api/v1/auth/sso/start') }],
    });
    expect(h.smtp.messages.some((m) => m.to.includes('dev@corp.test'))).toBe(false);
  });

  it('refuses a code for such an address (a team invitation, a link from before) at verify-code', async () => {
    const { code } = await issueSignInCode(h.deps, 'dev@corp.test');
    const res = await request(h.app).post('/api/v1/auth/verify-code').send({ code });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('sso_required');
    expect(sessionCookieOf(res)).toBeUndefined();
  });

  it('allows them when the operator sets OIDC_MAGIC_LINK_FALLBACK', async () => {
    const lenient = await h.startInstance({ OIDC_MAGIC_LINK_FALLBACK: 'true' });
    const res = await request(lenient.app)
      .post('/api/v1/auth/request-magic-link')
      .set('X-Forwarded-For', '10.77.0.2')
      .send({ email: 'fallback@corp.test' });
    expect(res.status).toBe(202);
    const link = await h.nextLink('fallback@corp.test');
    const verified = await request(lenient.app)
      .post('/api/v1/auth/verify-code')
      .send({ code: link.searchParams.get('code') });
    expect(verified.status).toBe(200);
  });

  it('tells the console that SSO is on', async () => {
    const res = await request(h.app).get('/api/v1/config');
    expect(res.body.sso).toBe(true);
  });
});

async function finishAs(login: string): Promise<string> {
  const { callback, cookie } = await throughProvider(login);
  const res = await finish(callback, cookie);
  expect(res.status).toBe(303);
  return sessionCookieOf(res) ?? '';
}
