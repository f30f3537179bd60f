import request from 'supertest';
import {
  type AiHarness,
  PUBLIC_URL,
  type TestCaller,
  useAiHarness,
  writeTempJson,
} from './support/ai-harness';
import { connectGatewayClient, type McpFleet, startMcpFleet, textOf, UPSTREAM_SECRET } from './support/mcp';

let fleet: McpFleet;
let h: AiHarness;
let caller: TestCaller;
let url: string;

beforeAll(async () => {
  fleet = await startMcpFleet({ notes: { kind: 'stateful' }, creds: { kind: 'credentialed' } });
});
afterAll(async () => {
  await fleet.close();
});

/** The operator's server is `notes`; `creds` is left for users to register. Tests may register 127.0.0.1. */
const mcpConfig = (allowedHosts: string[]) =>
  writeTempJson('mcp.json', {
    servers: [{ name: 'notes', url: fleet.notes?.endpoint }],
    user_servers: { allowed_hosts: allowedHosts },
  });

useAiHarness(
  () => ({ MCP_CONFIG: mcpConfig(['127.0.0.1']) }),
  (state) => {
    ({ h, caller, url } = state);
  },
  { listen: true },
);

function register(body: Record<string, unknown>, app = h.app, who: TestCaller = caller) {
  return request(app)
    .post('/api/v1/mcp/servers')
    .set('cookie', who.cookie)
    .set('origin', PUBLIC_URL)
    .send(body);
}

const credsBody = () => ({
  name: 'mine',
  url: fleet.creds?.endpoint,
  headers: { 'x-upstream-key': UPSTREAM_SECRET },
});

describe('POST /api/v1/mcp/servers', () => {
  it('checks the server, shows its tools, stores the credential encrypted and never returns it', async () => {
    const res = await register(credsBody());
    expect(res.status).toBe(201);
    expect(res.body.server).toMatchObject({
      name: 'mine',
      source: 'user',
      credential_headers: ['x-upstream-key'],
    });
    expect(res.body.tools).toEqual([
      expect.objectContaining({ name: 'whoami', exposed_name: 'mine__whoami' }),
    ]);
    const list = await request(h.app).get('/api/v1/mcp/servers').set('x-api-key', caller.apiKey);
    expect(list.status).toBe(200);
    expect(list.body.servers.map((s: { name: string }) => s.name)).toEqual(['notes', 'mine']);
    expect(list.body.servers[0].url).toBeUndefined();
    const row = await h.prisma.mcpServer.findFirstOrThrow({ where: { userId: caller.userId } });
    expect(Buffer.from(row.ciphertext ?? []).toString('latin1')).not.toContain(UPSTREAM_SECRET);
    expect(JSON.stringify([res.body, list.body])).not.toContain(UPSTREAM_SECRET);
  });

  it("the owner's keys use it through /mcp with the credential injected; other users do not see it", async () => {
    expect((await register(credsBody())).status).toBe(201);
    const { client } = await connectGatewayClient(url, caller.apiKey);
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['mine__whoami', 'notes__increment']));
    expect(textOf(await client.callTool({ name: 'mine__whoami' }))).toContain('authorized');
    await client.close();
    const other = await h.createCaller();
    const otherClient = (await connectGatewayClient(url, other.apiKey)).client;
    expect((await otherClient.listTools()).tools.map((t) => t.name)).not.toContain('mine__whoami');
    await otherClient.close();
  });

  it('a server that does not answer as MCP (wrong credential) is 422 and is not stored', async () => {
    const res = await register({ ...credsBody(), headers: { 'x-upstream-key': 'wrong' } });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ error: 'mcp server did not answer', request_id: expect.any(String) });
    expect(await h.prisma.mcpServer.count({ where: { userId: caller.userId } })).toBe(0);
  });

  it("an operator's server name, or one the user has, is 409", async () => {
    expect((await register({ name: 'notes', url: fleet.creds?.endpoint })).status).toBe(409);
    expect((await register(credsBody())).status).toBe(201);
    const again = await register(credsBody());
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ error: 'mcp server already exists' });
  });

  it('no command can be registered: a stdio-style body is refused and nothing is stored', async () => {
    // Without a url the body is missing a required field (422, as every route answers that).
    const res = await register({ name: 'evil', command: 'sh', args: ['-c', 'touch /tmp/pwned'] });
    expect(res.status).toBe(422);
    const withUrl = await register({ ...credsBody(), name: 'evil', command: 'sh' });
    expect(withUrl.status).toBe(422);
    expect((await register({ name: 'evil', url: 'file:///bin/sh' })).status).toBe(400);
    expect(await h.prisma.mcpServer.count({ where: { userId: caller.userId } })).toBe(0);
  });

  it('without an allowlist, internal addresses are refused (SSRF)', async () => {
    const strict = h.startInstance({ MCP_CONFIG: mcpConfig([]) });
    for (const target of [fleet.creds?.endpoint, 'http://169.254.169.254/mcp', 'http://[::1]:80/mcp']) {
      const res = await register({ name: 'inside', url: target }, strict);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ error: 'mcp server url is not allowed' });
    }
  });

  it('DELETE removes a server; the second time it is 404', async () => {
    expect((await register(credsBody())).status).toBe(201);
    const del = () =>
      request(h.app)
        .delete('/api/v1/mcp/servers/mine')
        .set('cookie', caller.cookie)
        .set('origin', PUBLIC_URL);
    expect((await del()).status).toBe(204);
    const again = await del();
    expect(again.status).toBe(404);
    expect(again.body).toMatchObject({ error: 'mcp server not found' });
  });

  it("GET /api/v1/mcp/servers/{name}/tools shows a server's tools as the clients see them", async () => {
    const res = await request(h.app).get('/api/v1/mcp/servers/notes/tools').set('x-api-key', caller.apiKey);
    expect(res.status).toBe(200);
    expect(res.body.tools.map((t: { exposed_name: string }) => t.exposed_name).sort()).toEqual([
      'notes__echo',
      'notes__increment',
    ]);
    const missing = await request(h.app)
      .get('/api/v1/mcp/servers/nope/tools')
      .set('x-api-key', caller.apiKey);
    expect(missing.status).toBe(404);
  });
});
