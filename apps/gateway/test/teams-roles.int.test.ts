import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { buildGatewayOpenApi } from '@platform/contract/openapi';
import request from 'supertest';
import { upsertUserBudget } from '../src/budgets/repo';
import { storeProviderKey } from '../src/provider-keys/store-provider-key';
import { insertTeam } from '../src/teams/repo';
import { createTeamRequestLogRouter } from '../src/teams/request-log-routes';
import { can, TEAM_PERMISSIONS, TEAM_ROLES, type TeamAction, type TeamRole } from '../src/teams/roles';
import { createTeamRouter } from '../src/teams/routes';
import { OWN_ORIGIN, type SignedIn, sessionCookieOf, useIdentityHarness } from './support/identity-harness';

/**
 * Item 1 of issue 42: every team route enforces its role, table-driven
 * (each role, and a non-member, x each action), and invitations join by
 * e-mail link.
 */
const h = useIdentityHarness({ PROVIDER_KEYS_MASTER_KEYS: `k1:${randomBytes(32).toString('base64')}` });

type Who = TeamRole | 'outsider';
let users: Record<Who | 'target' | 'second', SignedIn>;

beforeAll(async () => {
  const names = [...TEAM_ROLES, 'outsider', 'target', 'second'] as const;
  const signed = await Promise.all(names.map(() => h.signIn()));
  users = Object.fromEntries(names.map((n, i) => [n, signed[i]])) as typeof users;
}, 30_000);

/** A fresh team: each role held by its user, `target` a viewer and `second` a member to act on. */
async function freshTeam(): Promise<{ id: string; keyId: string; subjectUserId: string }> {
  const team = await insertTeam(h.prisma, 'roles', users.owner.userId);
  const extra: [string, string][] = [
    [users.admin.userId, 'admin'],
    [users.member.userId, 'member'],
    [users.viewer.userId, 'viewer'],
    [users.target.userId, 'viewer'],
    [users.second.userId, 'member'],
  ];
  await h.prisma.teamMember.createMany({
    data: extra.map(([userId, role]) => ({ teamId: team.id, userId, role })),
  });
  // A budget and a provider key of the team for the removals to remove.
  await upsertUserBudget(h.prisma, team.subjectUserId, teamBudget);
  await storeProviderKey(h.deps, { userId: team.subjectUserId, provider: 'openai', key: 'sk-team-0000wxyz' });
  const key = await request(h.app)
    .post(`/api/v1/teams/${team.id}/api-keys`)
    .set('Cookie', users.owner.cookie)
    .set('Origin', OWN_ORIGIN)
    .send({ name: 'teamkey' });
  expect(key.status).toBe(201);
  return { id: team.id, keyId: key.body.key_id, subjectUserId: team.subjectUserId };
}

type Case = {
  method: 'get' | 'post' | 'put' | 'delete';
  path: string;
  query?: Record<string, string>;
  body?: (t: { keyId: string }) => object;
  ok: number;
};
const budget = { scope: 'user', subject: '', period: 'daily', unit: 'tokens', limit: 1000 };
const teamBudget = { scope: 'project', subject: 'p1', period: 'daily', unit: 'tokens', limit: 500 } as const;
const ACTIONS: Record<string, Case & { permission: TeamAction }> = {
  'list members': { permission: 'members.read', method: 'get', path: 'members', ok: 200 },
  'list keys': { permission: 'keys.read', method: 'get', path: 'api-keys', ok: 200 },
  'list budgets': { permission: 'budgets.read', method: 'get', path: 'budgets', ok: 200 },
  'list provider keys': { permission: 'provider_keys.read', method: 'get', path: 'provider-keys', ok: 200 },
  'read usage': { permission: 'usage.read', method: 'get', path: 'usage', ok: 200 },
  'create key': {
    permission: 'keys.write',
    method: 'post',
    path: 'api-keys',
    body: () => ({ name: 'k' }),
    ok: 201,
  },
  'change key rules': {
    permission: 'keys.write',
    method: 'post',
    path: 'api-keys/rules',
    body: (t) => ({ key_id: t.keyId, rules: { models: ['free-a'] }, expires_at: null }),
    ok: 200,
  },
  'revoke key': {
    permission: 'keys.write',
    method: 'post',
    path: 'api-keys/revoke',
    body: (t) => ({ key_id: t.keyId }),
    ok: 200,
  },
  invite: {
    permission: 'members.invite',
    method: 'post',
    path: 'invites',
    body: () => ({ email: `invited-${randomBytes(4).toString('hex')}@example.com`, role: 'viewer' }),
    ok: 201,
  },
  'change a role': {
    permission: 'members.role',
    method: 'post',
    path: 'members/role',
    body: () => ({ user_id: users.target.userId, role: 'member' }),
    ok: 200,
  },
  'remove a member': {
    permission: 'members.remove',
    method: 'post',
    path: 'members/remove',
    body: () => ({ user_id: users.target.userId }),
    ok: 204,
  },
  'set a budget': {
    permission: 'budgets.write',
    method: 'put',
    path: 'budgets',
    body: () => budget,
    ok: 200,
  },
  'remove a budget': {
    permission: 'budgets.write',
    method: 'delete',
    path: 'budgets',
    query: { scope: 'project', subject: 'p1', period: 'daily', unit: 'tokens' },
    ok: 204,
  },
  'remove a provider key': {
    permission: 'provider_keys.write',
    method: 'delete',
    path: 'provider-keys/{provider}',
    ok: 204,
  },
  'set a provider key': {
    permission: 'provider_keys.write',
    method: 'post',
    path: 'provider-keys',
    body: () => ({ provider: 'openai', key: 'sk-team-0000abcd' }),
    ok: 201,
  },
  'read the audit log': { permission: 'audit.read', method: 'get', path: 'audit', ok: 200 },
  'read the request log': { permission: 'request_log.read', method: 'get', path: 'request-log', ok: 200 },
  // An id that is no request: 404 `not found` for a member, `team not found` for an outsider.
  'open a request': { permission: 'request_log.read', method: 'get', path: 'request-log/{id}', ok: 404 },
  'read project settings': {
    permission: 'request_log.read',
    method: 'get',
    path: 'project-settings',
    ok: 200,
  },
  'set project capture': {
    permission: 'projects.write',
    method: 'put',
    path: 'project-settings',
    body: () => ({ project_id: 'p', capture_content: true }),
    ok: 200,
  },
  'transfer ownership': {
    permission: 'team.transfer',
    method: 'post',
    path: 'transfer',
    body: () => ({ user_id: users.second.userId }),
    ok: 200,
  },
};

const RANK: Record<TeamRole, number> = { owner: 4, admin: 3, member: 2, viewer: 1 };
const allowed = (who: Who, action: TeamAction) =>
  who !== 'outsider' && RANK[who] >= RANK[TEAM_PERMISSIONS[action]];

const cases = Object.entries(ACTIONS).flatMap(([name, c]) =>
  ([...TEAM_ROLES, 'outsider'] as Who[]).map((who) => [who, name, c] as const),
);

/** `METHOD path` of every route of the team router under one team, read from the router itself. */
function teamRoutes(): string[] {
  type Layer = { route?: { path: string; methods: Record<string, boolean> } };
  const stack = [createTeamRouter(h.deps), createTeamRequestLogRouter(h.deps)].flatMap(
    (router) => (router as unknown as { stack: Layer[] }).stack,
  );
  return stack.flatMap((layer) =>
    layer.route?.path.startsWith('/api/v1/teams/:teamId/')
      ? Object.keys(layer.route.methods).map(
          // Path parameters as the OpenAPI document writes them: `:provider` -> `{provider}`.
          (m) =>
            `${m} ${layer.route?.path.slice('/api/v1/teams/:teamId/'.length).replace(/:([a-z]+)/g, '{$1}')}`,
        )
      : [],
  );
}

describe('team roles', () => {
  it('the table covers every permission', () => {
    expect(new Set(Object.values(ACTIONS).map((c) => c.permission))).toEqual(
      new Set(Object.keys(TEAM_PERMISSIONS).filter((p) => p !== 'team.read')),
    );
  });

  it("docs/teams.md's roles table is the code's, cell by cell, and names each route under its permission", () => {
    const doc = fs.readFileSync(path.join(__dirname, '..', '..', '..', 'docs', 'teams.md'), 'utf8');
    const rows = new Map(
      doc
        .split('\n')
        .map((line) => /^\| `([a-z_.]+)` +\|(.*)\|$/.exec(line))
        .filter((m): m is RegExpExecArray => m !== null && m[1] !== undefined && m[1] in TEAM_PERMISSIONS)
        .map((m) => [m[1] as TeamAction, (m[2] ?? '').split('|').map((cell) => cell.trim())]),
    );
    expect([...rows.keys()].sort()).toEqual(Object.keys(TEAM_PERMISSIONS).sort());
    for (const [action, cells] of rows) {
      expect([action, cells.slice(0, 4)]).toEqual([
        action,
        TEAM_ROLES.map((r) => (can(r, action) ? 'yes' : 'no')),
      ]);
    }
    for (const c of [...Object.values(ACTIONS), { permission: 'team.read' as const, path: 'leave' }]) {
      expect([c.permission, rows.get(c.permission)?.[4]]).toEqual([
        c.permission,
        expect.stringContaining(`…/${c.path}`),
      ]);
    }
  });

  it('the OpenAPI document describes every route under a team', () => {
    const paths = buildGatewayOpenApi().paths ?? {};
    const documented = Object.entries(paths).flatMap(([p, item]) =>
      p.startsWith('/api/v1/teams/{teamId}/')
        ? Object.keys(item as object).map((m) => `${m} ${p.slice('/api/v1/teams/{teamId}/'.length)}`)
        : [],
    );
    expect(documented.sort()).toEqual(teamRoutes().sort());
  });

  it('the table covers every route under a team (leave has its own test below)', () => {
    const tested = [...Object.values(ACTIONS).map((c) => `${c.method} ${c.path}`), 'post leave'];
    expect(teamRoutes().sort()).toEqual(tested.sort());
  });

  it.each(cases)('%s: %s', async (who, _name, c) => {
    const team = await freshTeam();
    const url = `/api/v1/teams/${team.id}/${c.path.replace('{provider}', 'openai').replace('{id}', randomUUID())}`;
    let req = request(h.app)[c.method](url).set('Cookie', users[who].cookie);
    if (c.query) req = req.query(c.query);
    if (c.method !== 'get') req = req.set('Origin', OWN_ORIGIN);
    if (c.method === 'post' || c.method === 'put') req = req.send(c.body ? c.body(team) : {});
    const res = await req;
    if (allowed(who, c.permission)) {
      expect(res.status).toBe(c.ok);
    } else if (who === 'outsider') {
      expect(res.status).toBe(404);
      expect(res.body.error).toBe('team not found');
    } else {
      expect(res.status).toBe(403);
      expect(res.body.details).toEqual([
        { path: `team.permissions.${c.permission}`, message: expect.any(String) },
      ]);
    }
  });

  it('leaving: every member but the owner may leave; the owner transfers first', async () => {
    const team = await freshTeam();
    const leave = (who: Who) =>
      request(h.app)
        .post(`/api/v1/teams/${team.id}/leave`)
        .set('Cookie', users[who].cookie)
        .set('Origin', OWN_ORIGIN)
        .send({});
    expect((await leave('owner')).status).toBe(403);
    for (const who of ['admin', 'member', 'viewer'] as const) expect((await leave(who)).status).toBe(204);
    expect((await leave('outsider')).status).toBe(404);
  });

  it("removing a team budget and a provider key lands in the team's audit log, and a missing one is 404", async () => {
    const team = await freshTeam();
    const asAdmin = (path: string) =>
      request(h.app)
        .delete(`/api/v1/teams/${team.id}/${path}`)
        .set('Cookie', users.admin.cookie)
        .set('Origin', OWN_ORIGIN);
    const query = 'budgets?scope=project&subject=p1&period=daily&unit=tokens';
    expect((await asAdmin(query)).status).toBe(204);
    expect((await asAdmin(query)).body.error).toBe('not found');
    expect((await asAdmin('provider-keys/openai')).status).toBe(204);
    expect((await asAdmin('provider-keys/openai')).body.error).toBe('provider key not found');
    const budgets = await request(h.app)
      .get(`/api/v1/teams/${team.id}/budgets`)
      .set('Cookie', users.viewer.cookie);
    expect(budgets.body.budgets.filter((b: { source: string }) => b.source === 'user')).toEqual([]);
    const log = await request(h.app).get(`/api/v1/teams/${team.id}/audit`).set('Cookie', users.owner.cookie);
    expect(
      log.body.events
        .slice(0, 2)
        .map((e: { action: string; target: string; before: unknown }) => [e.action, e.target, e.before]),
    ).toEqual([
      ['provider_key.delete', 'provider_key:openai', null],
      ['budget.delete', 'budget:project.daily.tokens:p1', { limit: 500 }],
    ]);
  });

  it('an admin cannot make an admin or touch the owner; nobody changes their own role', async () => {
    const team = await freshTeam();
    const asAdmin = (path: string, body: object) =>
      request(h.app)
        .post(`/api/v1/teams/${team.id}/${path}`)
        .set('Cookie', users.admin.cookie)
        .set('Origin', OWN_ORIGIN)
        .send(body);
    expect((await asAdmin('members/role', { user_id: users.target.userId, role: 'admin' })).status).toBe(403);
    expect((await asAdmin('members/remove', { user_id: users.owner.userId })).status).toBe(403);
    expect((await asAdmin('members/role', { user_id: users.admin.userId, role: 'member' })).status).toBe(403);
    expect((await asAdmin('invites', { email: 'x@example.com', role: 'admin' })).status).toBe(403);
  });

  it('an invitation joins the invited address by its e-mail link, once, and no other address', async () => {
    const team = await freshTeam();
    const email = `invitee-${randomBytes(4).toString('hex')}@example.com`;
    const invited = await request(h.app)
      .post(`/api/v1/teams/${team.id}/invites`)
      .set('Cookie', users.admin.cookie)
      .set('Origin', OWN_ORIGIN)
      .send({ email, role: 'member' });
    expect(invited.status).toBe(201);
    // The mailed link signs the invited person in (its code) and carries the invitation.
    const link = await h.nextLink(email);
    const token = link.searchParams.get('team_invite') ?? '';
    const verified = await request(h.app)
      .post('/api/v1/auth/verify-code')
      .send({ code: link.searchParams.get('code') });
    expect(verified.status).toBe(200);
    const cookie = sessionCookieOf(verified) ?? '';
    const invitee = { cookie } as SignedIn;
    const accept = (who: SignedIn) =>
      request(h.app)
        .post('/api/v1/teams/invites/accept')
        .set('Cookie', who.cookie)
        .set('Origin', OWN_ORIGIN)
        .send({ token });
    expect((await accept(users.outsider)).body.error).toBe('invalid or expired invite');
    const joined = await accept(invitee);
    expect(joined.body).toEqual({ team_id: team.id, role: 'member' });
    expect((await accept(invitee)).status).toBe(400);
    const teams = await request(h.app).get('/api/v1/teams').set('Cookie', invitee.cookie);
    expect(teams.body.teams).toEqual([
      {
        team_id: team.id,
        name: 'roles',
        role: 'member',
        billing_user_id: team.subjectUserId,
        permissions: [
          'team.read',
          'members.read',
          'keys.read',
          'budgets.read',
          'provider_keys.read',
          'usage.read',
          'request_log.read',
          'keys.write',
        ],
      },
    ]);
    // The team's audit log shows the invitation and the join.
    const log = await request(h.app).get(`/api/v1/teams/${team.id}/audit`).set('Cookie', users.owner.cookie);
    expect(log.body.events.slice(0, 2).map((e: { action: string }) => e.action)).toEqual([
      'member.join',
      'member.invite',
    ]);
  });
});
