import request from 'supertest';
import { CAPTURE_MAX_CHARS } from '../src/observability/capture';
import { insertTeam } from '../src/teams/repo';
import { type AiHarness, PUBLIC_URL, type TestCaller, useAiHarness } from './support/ai-harness';

/**
 * Issue 43, prompt and answer capture: off by default, on per project by its
 * owner (PUT /api/v1/project-settings, or a team admin for a team's project),
 * redacted, cut at CAPTURE_MAX_CHARS, kept in the request log row; only the
 * owner (and a team's admins) read it.
 */
let h: AiHarness;
let caller: TestCaller;
useAiHarness({ AI_RATE_LIMIT_PER_MINUTE: '1000' }, (state) => {
  ({ h, caller } = state);
});

const FAKE_SECRET = 'sk-proj-FAKE0123456789abcdefABCDEF';

function chat(key: string, project: string, content: string, path = '/api/v1/ai/chat/completions') {
  return request(h.app)
    .post(path)
    .set('x-api-key', key)
    .send({ lane: 'free', project_id: project, messages: [{ role: 'user', content }] });
}

function setCapture(who: TestCaller, project: string, on: boolean) {
  return request(h.app)
    .put('/api/v1/project-settings')
    .set('x-api-key', who.apiKey)
    .send({ project_id: project, capture_content: on });
}

/** The caller's newest request of `project`, opened in the detail view. */
async function newest(who: { apiKey: string }, project: string) {
  await h.deps.ai.requestLog?.flush();
  const page = await request(h.app)
    .get(`/api/v1/request-log?project_id=${encodeURIComponent(project)}&limit=1`)
    .set('x-api-key', who.apiKey);
  expect(page.status).toBe(200);
  const id = page.body.requests[0]?.request_id as string;
  expect(page.body.requests[0]).not.toHaveProperty('content');
  return request(h.app).get(`/api/v1/request-log/${id}`).set('x-api-key', who.apiKey);
}

describe('prompt and answer capture', () => {
  it('is off by default: the row keeps no text, the detail shows none', async () => {
    h.openai.set({ content: 'the answer' });
    expect((await chat(caller.apiKey, 'quiet', `my key ${FAKE_SECRET}`)).status).toBe(200);
    const detail = await newest(caller, 'quiet');
    expect(detail.status).toBe(200);
    expect(detail.body.content).toBeNull();
    const row = await h.prisma.requestLogEntry.findUnique({ where: { requestId: detail.body.request_id } });
    expect([row?.prompt, row?.answer]).toEqual([null, null]);
    const settings = await request(h.app).get('/api/v1/project-settings').set('x-api-key', caller.apiKey);
    expect(settings.body).toEqual({ projects: [] });
  });

  it('on for one project: its prompt (redacted) and answer are kept, another project of the owner stays empty', async () => {
    const set = await setCapture(caller, 'loud', true);
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({
      project_id: 'loud',
      capture_content: true,
      updated_at: expect.any(String),
    });
    h.openai.set({ content: `here is ${FAKE_SECRET} back` });
    expect((await chat(caller.apiKey, 'loud', `use ${FAKE_SECRET} and Bearer abc.def.ghi`)).status).toBe(200);
    const detail = await newest(caller, 'loud');
    expect(detail.body.content).toEqual({
      prompt: 'user: use [REDACTED] and Bearer [REDACTED]',
      answer: 'here is [REDACTED] back',
    });
    expect(JSON.stringify(detail.body)).not.toContain(FAKE_SECRET);
    const row = await h.prisma.requestLogEntry.findUnique({ where: { requestId: detail.body.request_id } });
    expect(row?.prompt).not.toContain(FAKE_SECRET);

    expect((await chat(caller.apiKey, 'quiet', 'not kept')).status).toBe(200);
    expect((await newest(caller, 'quiet')).body.content).toBeNull();
    const other = await h.createCaller();
    expect(
      (
        await request(h.app)
          .get(`/api/v1/request-log/${detail.body.request_id}`)
          .set('x-api-key', other.apiKey)
      ).status,
    ).toBe(404);
  });

  it('captures a stream’s answer as the caller got it, cuts a long prompt, and stops when turned off', async () => {
    expect((await setCapture(caller, 'streams', true)).status).toBe(200);
    h.openai.set({ chunks: ['one ', 'two'] });
    const long = 'x'.repeat(CAPTURE_MAX_CHARS + 500);
    const streamed = await chat(caller.apiKey, 'streams', long, '/api/v1/ai/chat/stream');
    expect(streamed.status).toBe(200);
    const detail = await newest(caller, 'streams');
    expect(detail.body.content.answer).toBe('one two');
    const prompt = detail.body.content.prompt as string;
    expect(prompt.startsWith('user: xxx')).toBe(true);
    expect(prompt).toContain(`[cut: ${'user: '.length + long.length} characters in all]`);
    expect(prompt.length).toBeLessThan(CAPTURE_MAX_CHARS + 64);

    expect((await setCapture(caller, 'streams', false)).status).toBe(200);
    expect((await chat(caller.apiKey, 'streams', 'after', '/api/v1/ai/chat/stream')).status).toBe(200);
    expect((await newest(caller, 'streams')).body.content).toBeNull();
  });

  it("a team's project: set by an admin, read by admins and the owner, never by a viewer or the team's key", async () => {
    const team = await insertTeam(h.prisma, 'capture', caller.userId);
    const [admin, viewer] = [await h.createCaller(), await h.createCaller()];
    await h.prisma.teamMember.createMany({
      data: [
        { teamId: team.id, userId: admin.userId, role: 'admin' },
        { teamId: team.id, userId: viewer.userId, role: 'viewer' },
      ],
    });
    const key = await request(h.app)
      .post(`/api/v1/teams/${team.id}/api-keys`)
      .set('Cookie', caller.cookie)
      .set('Origin', PUBLIC_URL)
      .send({ name: 'teamkey' });
    expect(key.status).toBe(201);
    const teamKey = key.body.key as string;

    // The team's key cannot turn capture on; a viewer cannot; an admin can.
    const byKey = await request(h.app)
      .put('/api/v1/project-settings')
      .set('x-api-key', teamKey)
      .send({ project_id: 'team-app', capture_content: true });
    expect(byKey.status).toBe(403);
    const put = (who: TestCaller) =>
      request(h.app)
        .put(`/api/v1/teams/${team.id}/project-settings`)
        .set('Cookie', who.cookie)
        .set('Origin', PUBLIC_URL)
        .send({ project_id: 'team-app', capture_content: true });
    expect((await put(viewer)).status).toBe(403);
    expect((await put(admin)).status).toBe(200);

    h.openai.set({ content: 'team answer' });
    expect((await chat(teamKey, 'team-app', 'team prompt')).status).toBe(200);
    const ownView = await newest({ apiKey: teamKey }, 'team-app');
    expect(ownView.status).toBe(200);
    expect(ownView.body.content).toBeNull();
    const id = ownView.body.request_id as string;
    const teamView = (who: TestCaller) =>
      request(h.app).get(`/api/v1/teams/${team.id}/request-log/${id}`).set('Cookie', who.cookie);
    for (const who of [caller, admin])
      expect((await teamView(who)).body.content).toEqual({
        prompt: 'user: team prompt',
        answer: 'team answer',
      });
    const seen = await teamView(viewer);
    expect(seen.status).toBe(200);
    expect(seen.body.content).toBeNull();
    const list = await request(h.app)
      .get(`/api/v1/teams/${team.id}/request-log?project_id=team-app`)
      .set('Cookie', viewer.cookie);
    expect(list.body.requests.map((r: { request_id: string }) => r.request_id)).toEqual([id]);
    const audit = await request(h.app).get(`/api/v1/teams/${team.id}/audit`).set('Cookie', caller.cookie);
    expect(JSON.stringify(audit.body)).toContain('project.capture');
  });

  it('refuses bad settings with a clear error', async () => {
    const bad = await request(h.app)
      .put('/api/v1/project-settings')
      .set('x-api-key', caller.apiKey)
      .send({ project_id: '', capture_content: 'yes' });
    expect(bad.status).toBeGreaterThanOrEqual(400);
    expect(bad.status).toBeLessThan(500);
    expect(bad.body).toMatchObject({ error: expect.any(String), request_id: expect.any(String) });
    const noOrigin = await request(h.app)
      .put('/api/v1/project-settings')
      .set('Cookie', caller.cookie)
      .send({ project_id: 'p', capture_content: true });
    expect(noOrigin.status).toBe(403);
  });
});
