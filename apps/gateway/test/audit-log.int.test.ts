import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { purgeAuditEvents } from '../src/audit/repo';
import { OWN_ORIGIN, useIdentityHarness } from './support/identity-harness';

/**
 * Item 3 of issue 42 (personal part): every administrative action on keys,
 * budgets, provider keys and sign-in leaves one append-only event (who, what,
 * when, from where, before and after), readable and exportable by its owner
 * only, purged past its retention.
 */
const h = useIdentityHarness({ PROVIDER_KEYS_MASTER_KEYS: `k1:${randomBytes(32).toString('base64')}` });

type Event = {
  id: string;
  at: string;
  actor_user_id: string | null;
  actor_kind: string;
  action: string;
  target: string | null;
  ip: string | null;
  user_agent: string | null;
  before: unknown;
  after: unknown;
};

async function events(cookie: string): Promise<Event[]> {
  const res = await request(h.app).get('/api/v1/audit').set('Cookie', cookie);
  expect(res.status).toBe(200);
  return res.body.events;
}

const write = (cookie: string, method: 'post' | 'put' | 'delete', path: string) =>
  request(h.app)
    [method](path)
    .set('Cookie', cookie)
    .set('Origin', OWN_ORIGIN)
    .set('User-Agent', 'audit-test/1');

describe('audit log', () => {
  it('records sign-in, key creation, rule change and revocation, budgets and provider keys, newest first', async () => {
    const me = await h.signIn();
    const [signIn] = await events(me.cookie);
    expect(signIn).toMatchObject({
      action: 'sign_in.magic_link',
      actor_user_id: me.userId,
      actor_kind: 'magic_link',
    });

    const created = await write(me.cookie, 'post', '/api/v1/auth/api-keys').send({
      name: 'audited',
      rules: { models: ['groq/free-a'] },
    });
    expect(created.status).toBe(201);
    const keyId = created.body.key_id as string;
    await write(me.cookie, 'post', '/api/v1/auth/api-keys/rules').send({
      key_id: keyId,
      rules: { models: ['groq/free-a', 'openai/std-1'] },
      expires_at: null,
    });
    await write(me.cookie, 'post', '/api/v1/auth/api-keys/revoke').send({ key_id: keyId });
    // Revoking a revoked key changes nothing: no second event.
    await write(me.cookie, 'post', '/api/v1/auth/api-keys/revoke').send({ key_id: keyId });
    const budget = { scope: 'user', subject: '', period: 'daily', unit: 'tokens' };
    expect((await write(me.cookie, 'put', '/api/v1/budgets').send({ ...budget, limit: 1000 })).status).toBe(
      200,
    );
    await write(me.cookie, 'put', '/api/v1/budgets').send({ ...budget, limit: 500 });
    expect(
      (
        await write(me.cookie, 'delete', '/api/v1/budgets').query({
          scope: 'user',
          period: 'daily',
          unit: 'tokens',
        })
      ).status,
    ).toBe(204);
    const byok = await write(me.cookie, 'post', '/api/v1/keys').send({
      provider: 'openai',
      key: 'sk-secret-abcd1234',
    });
    expect(byok.status).toBe(201);
    expect((await write(me.cookie, 'delete', '/api/v1/keys/openai')).status).toBe(204);

    const log = await events(me.cookie);
    expect(log.map((e) => e.action)).toEqual([
      'provider_key.delete',
      'provider_key.set',
      'budget.delete',
      'budget.set',
      'budget.set',
      'api_key.revoke',
      'api_key.rules',
      'api_key.create',
      'sign_in.magic_link',
    ]);
    const [pkDelete, pkSet, bDelete, bSet2, bSet1, revoke, rules, create] = log;
    expect(create).toMatchObject({
      actor_user_id: me.userId,
      actor_kind: 'session',
      target: `api_key:${keyId}`,
      user_agent: 'audit-test/1',
      before: null,
      after: { name: 'audited', rules: { models: ['groq/free-a'] }, expires_at: null },
    });
    expect(typeof create?.ip).toBe('string');
    expect(Number.isNaN(Date.parse(create?.at ?? ''))).toBe(false);
    expect(rules).toMatchObject({
      before: { rules: { models: ['groq/free-a'] } },
      after: { rules: { models: ['groq/free-a', 'openai/std-1'] } },
    });
    expect(revoke).toMatchObject({ before: { status: 'active' }, after: { status: 'revoked' } });
    expect(bSet1).toMatchObject({ target: 'budget:user.daily.tokens', before: null, after: { limit: 1000 } });
    expect(bSet2).toMatchObject({ before: { limit: 1000 }, after: { limit: 500 } });
    expect(bDelete).toMatchObject({ before: { limit: 500 }, after: null });
    expect(pkSet).toMatchObject({ target: 'provider_key:openai', after: { provider: 'openai' } });
    expect(pkDelete?.target).toBe('provider_key:openai');
    // No secret reaches the log: not the API key's plaintext, not the provider key.
    const raw = JSON.stringify(log);
    expect(raw).not.toContain(created.body.key);
    expect(raw).not.toContain('sk-secret-abcd1234');

    // Another user sees none of it.
    const other = await h.signIn();
    expect((await events(other.cookie)).map((e) => e.action)).toEqual(['sign_in.magic_link']);
  });

  it('is append-only: UPDATE and DELETE are refused; only the retention purge deletes, and only old events', async () => {
    const me = await h.signIn();
    await expect(
      h.prisma.$executeRaw`UPDATE audit_events SET action = 'x' WHERE owner_user_id = ${me.userId}::uuid`,
    ).rejects.toThrow(/append-only/);
    await expect(
      h.prisma.$executeRaw`DELETE FROM audit_events WHERE owner_user_id = ${me.userId}::uuid`,
    ).rejects.toThrow(/append-only/);
    expect(await events(me.cookie)).toHaveLength(1);
    // The purge deletes what is older than its cut-off, nothing newer.
    expect(await purgeAuditEvents(h.deps.sql, new Date(Date.now() - 3_600_000), 100)).toBe(0);
    expect(await events(me.cookie)).toHaveLength(1);
    expect(await purgeAuditEvents(h.deps.sql, new Date(Date.now() + 60_000), 100_000)).toBeGreaterThanOrEqual(
      1,
    );
    expect(await events(me.cookie)).toHaveLength(0);
    // The purge's setting lasted its own statement: a plain DELETE is refused again.
    await write(me.cookie, 'post', '/api/v1/auth/api-keys').send({ name: 'after' });
    for (let i = 0; i < 4; i += 1)
      await expect(
        h.deps.sql.query('DELETE FROM audit_events WHERE owner_user_id = $1::uuid', [me.userId]),
      ).rejects.toThrow(/append-only/);
  });

  it('pages and exports as NDJSON and CSV; a bad query is 400, never 500', async () => {
    const me = await h.signIn();
    for (let i = 0; i < 3; i += 1)
      await write(me.cookie, 'post', '/api/v1/auth/api-keys').send({ name: `k${i}` });
    const page = await request(h.app).get('/api/v1/audit?limit=2').set('Cookie', me.cookie);
    expect(page.body.events).toHaveLength(2);
    const rest = await request(h.app)
      .get(`/api/v1/audit?limit=2&before=${page.body.next_before}`)
      .set('Cookie', me.cookie);
    expect(rest.body.events.map((e: Event) => e.action)).toEqual(['api_key.create', 'sign_in.magic_link']);

    const ndjson = await request(h.app).get('/api/v1/audit/export').set('Cookie', me.cookie);
    expect(ndjson.headers['content-type']).toMatch(/application\/x-ndjson/);
    const lines = ndjson.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Event);
    expect(lines.map((e) => e.action)).toEqual([
      'api_key.create',
      'api_key.create',
      'api_key.create',
      'sign_in.magic_link',
    ]);

    const csv = await request(h.app).get('/api/v1/audit/export?format=csv').set('Cookie', me.cookie);
    expect(csv.headers['content-disposition']).toBe('attachment; filename="audit.csv"');
    const rows = csv.text.trim().split('\n');
    expect(rows[0]).toBe('id,at,actor_user_id,actor_kind,action,target,ip,user_agent,before,after');
    expect(rows).toHaveLength(5);

    for (const q of ['limit=0', 'before=abc', 'format=xml', 'since=yesterday', 'other=1']) {
      const path = q.startsWith('format') || q.startsWith('since') ? '/api/v1/audit/export' : '/api/v1/audit';
      const res = await request(h.app).get(`${path}?${q}`).set('Cookie', me.cookie);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('validation failed');
    }
    expect((await request(h.app).get('/api/v1/audit')).status).toBe(401);
  });
});
