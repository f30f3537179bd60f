import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import request from 'supertest';
import { MCP_GATEWAY_ERRORS } from '../src/mcp/errors';
import { type AiHarness, PUBLIC_URL, type TestCaller, useAiHarness } from './support/ai-harness';
import { connectGatewayClient, type McpFleet, mcpErrorOf, startMcpFleet, textOf } from './support/mcp';

let fleet: McpFleet;
let h: AiHarness;
let caller: TestCaller;
let url: string;
const closers: Array<() => Promise<void>> = [];

beforeAll(async () => {
  fleet = await startMcpFleet({
    notes: { kind: 'stateful' },
    vault: { kind: 'long-names' },
    limited: { kind: 'stateful' },
  });
});
afterAll(async () => {
  await fleet.close();
});

useAiHarness(
  () => ({
    MCP_CONFIG: fleet.configFile({}, { vault: { default_allowed: false }, limited: { calls_per_minute: 2 } }),
  }),
  (state) => {
    ({ h, caller, url } = state);
  },
  { listen: true },
);

afterEach(async () => {
  for (const close of closers.splice(0)) await close().catch(() => {});
});

async function connect(headers: Record<string, string> = {}) {
  const { client } = await connectGatewayClient(url, caller.apiKey, headers);
  closers.push(() => client.close());
  return client;
}

function setPolicy(body: Record<string, unknown>, who: TestCaller = caller) {
  return request(h.app)
    .put('/api/v1/mcp/policies')
    .set('cookie', who.cookie)
    .set('origin', PUBLIC_URL)
    .send(body);
}

const toolNames = async (client: Awaited<ReturnType<typeof connect>>) =>
  (await client.listTools()).tools.map((t) => t.name).sort();

describe('MCP governance per key', () => {
  it('without a policy a key sees the servers allowed by default only', async () => {
    const names = await toolNames(await connect());
    expect(names).toContain('notes__increment');
    expect(names.some((n) => n.startsWith('vault__'))).toBe(false);
  });

  it('allow and deny lists filter tools/list, and a tool not allowed is refused on call', async () => {
    const set = await setPolicy({
      scope: 'api_key',
      subject: caller.apiKeyId,
      allow: ['notes/echo', 'vault'],
      deny: ['vault/short'],
    });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ allow: ['notes/echo', 'vault'], deny: ['vault/short'] });
    const client = await connect();
    const names = await toolNames(client);
    expect(names).toContain('notes__echo');
    expect(names).not.toContain('notes__increment');
    expect(names).not.toContain('vault__short');
    expect(names.some((n) => n.startsWith('vault__summarise'))).toBe(true);
    const refused = await mcpErrorOf(client.callTool({ name: 'notes__increment' }));
    expect(refused.code).toBe(ErrorCode.InvalidParams);
    expect(refused.message).toMatch(/not allowed/);
    expect((await mcpErrorOf(client.callTool({ name: 'vault__short' }))).message).toMatch(/not allowed/);
    expect(textOf(await client.callTool({ name: 'notes__echo', arguments: { text: 'ok' } }))).toBe('ok');
    // A refused call reaches no server and is not recorded.
    await h.usage.flush();
    const rows = await h.prisma.usageRecord.findMany({ where: { userId: caller.userId, endpoint: 'mcp' } });
    expect(rows.map((r) => r.model)).toEqual(['notes/echo']);
  });

  it('a policy change applies to an open session', async () => {
    const client = await connect();
    expect(await toolNames(client)).toContain('notes__increment');
    expect(
      (
        await setPolicy({
          scope: 'api_key',
          subject: caller.apiKeyId,
          allow: null,
          deny: ['notes/increment'],
        })
      ).status,
    ).toBe(200);
    expect(await toolNames(client)).not.toContain('notes__increment');
    expect((await mcpErrorOf(client.callTool({ name: 'notes__increment' }))).message).toMatch(/not allowed/);
  });

  it('a project policy governs every key used with that project', async () => {
    expect(
      (await setPolicy({ scope: 'project', subject: 'shared', allow: null, deny: ['notes'] })).status,
    ).toBe(200);
    const shared = await connect({ 'x-project-id': 'shared' });
    expect((await toolNames(shared)).some((n) => n.startsWith('notes__'))).toBe(false);
    const other = await connect({ 'x-project-id': 'other' });
    expect(await toolNames(other)).toContain('notes__increment');
  });

  it('a server rate limit refuses calls past it, with the retry time', async () => {
    const client = await connect();
    await client.callTool({ name: 'limited__increment' });
    await client.callTool({ name: 'limited__increment' });
    const err = await mcpErrorOf(client.callTool({ name: 'limited__increment' }));
    expect(err.code).toBe(MCP_GATEWAY_ERRORS.rate_limited);
    expect(err.data).toMatchObject({ retry_after_seconds: expect.any(Number) });
  });
});

describe('/api/v1/mcp/policies', () => {
  it('lists, replaces and removes policies; a removed one is 404 the second time', async () => {
    await setPolicy({ scope: 'api_key', subject: caller.apiKeyId, allow: ['notes'], deny: [] });
    const list = await request(h.app).get('/api/v1/mcp/policies').set('x-api-key', caller.apiKey);
    expect(list.status).toBe(200);
    expect(list.body.policies).toEqual([
      expect.objectContaining({ scope: 'api_key', subject: caller.apiKeyId, allow: ['notes'], deny: [] }),
    ]);
    const del = () =>
      request(h.app)
        .delete(`/api/v1/mcp/policies?scope=api_key&subject=${caller.apiKeyId}`)
        .set('cookie', caller.cookie)
        .set('origin', PUBLIC_URL);
    expect((await del()).status).toBe(204);
    const again = await del();
    expect(again.status).toBe(404);
    expect(again.body).toMatchObject({ error: 'not found', request_id: expect.any(String) });
  });

  it('an API key cannot change policies (a leaked key cannot widen its own access)', async () => {
    const res = await request(h.app)
      .put('/api/v1/mcp/policies')
      .set('x-api-key', caller.apiKey)
      .send({ scope: 'api_key', subject: caller.apiKeyId, allow: null, deny: [] });
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ error: 'missing_authentication' });
  });

  it("another user's key is 404 api key not found; a bad entry is a validation error", async () => {
    const other = await h.createCaller();
    const foreign = await setPolicy({ scope: 'api_key', subject: other.apiKeyId, allow: null, deny: [] });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toMatchObject({ error: 'api key not found' });
    const bad = await setPolicy({
      scope: 'api_key',
      subject: caller.apiKeyId,
      allow: ['Notes/*x'],
      deny: [],
    });
    expect(bad.status).toBe(400);
    expect(bad.body.request_id).toEqual(expect.any(String));
  });

  it('a write without the console Origin is refused with 403 csrf_origin', async () => {
    const res = await request(h.app)
      .put('/api/v1/mcp/policies')
      .set('cookie', caller.cookie)
      .set('origin', 'https://evil.example')
      .send({ scope: 'api_key', subject: caller.apiKeyId, allow: null, deny: [] });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ error: 'csrf_origin' });
  });
});
