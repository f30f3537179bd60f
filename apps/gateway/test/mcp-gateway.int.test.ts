import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { LONG_TOOL_NAME } from '@platform/testing';
import request from 'supertest';
import { MCP_GATEWAY_ERRORS } from '../src/mcp/errors';
import { exposedName } from '../src/mcp/names';
import { type AiHarness, PUBLIC_URL, type TestCaller, useAiHarness } from './support/ai-harness';
import {
  connectGatewayClient,
  type McpFleet,
  mcpErrorOf,
  startMcpFleet,
  textOf,
  UPSTREAM_SECRET,
} from './support/mcp';

let fleet: McpFleet;
let h: AiHarness;
let caller: TestCaller;
let url: string;
const open: Client[] = [];

beforeAll(async () => {
  fleet = await startMcpFleet({
    stateful: { kind: 'stateful' },
    legacy: { kind: 'stateful', transport: 'sse' },
    slow: { kind: 'slow' },
    failing: { kind: 'failing' },
    longnames: { kind: 'long-names' },
    creds: { kind: 'credentialed' },
    doomed: { kind: 'stateful' },
  });
});
afterAll(async () => {
  await fleet.close();
});

useAiHarness(
  () => ({
    MCP_CONFIG: fleet.configFile(
      {
        max_result_bytes: 20_000,
        breaker: { failures: 2, cooldown_ms: 60_000 },
        payload_log_projects: ['audited'],
      },
      { slow: { timeout_ms: 2000 }, longnames: { price_per_call: 0.001 } },
    ),
    // Each test has a new key: 2.5 calls of longnames a day.
    AI_BUDGET_DEFAULTS: 'api_key.daily.cost=2500',
  }),
  (state) => {
    ({ h, caller, url } = state);
  },
  { listen: true },
);

afterEach(async () => {
  for (const client of open.splice(0)) await client.close().catch(() => {});
});

async function connect(key = caller.apiKey, headers: Record<string, string> = {}) {
  const { client, transport } = await connectGatewayClient(url, key, headers);
  open.push(client);
  return { client, transport };
}

async function mcpRows(userId: string) {
  await h.usage.flush();
  return h.prisma.usageRecord.findMany({ where: { userId, endpoint: 'mcp' }, orderBy: { id: 'asc' } });
}

describe('POST /mcp aggregates the configured servers', () => {
  it('lists the tools, prompts and resources of every server under <server>__<name>', async () => {
    const { client } = await connect();
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'stateful__increment',
        'stateful__echo',
        'legacy__increment',
        'slow__sleep',
        'failing__fail',
        'longnames__short',
        'creds__whoami',
      ]),
    );
    for (const name of names) expect(name).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
    expect((await client.listPrompts()).prompts.map((p) => p.name)).toContain('stateful__greet');
    expect((await client.listResources()).resources.map((r) => r.uri)).toContain('memo://readme');
    const read = await client.readResource({ uri: 'memo://readme' });
    expect(read.contents[0]).toMatchObject({ text: 'the stateful server readme' });
    const prompt = await client.getPrompt({ name: 'stateful__greet', arguments: { name: 'Ada' } });
    expect(prompt.messages[0]?.content).toMatchObject({ text: 'Hello Ada' });
  });

  it('a tool name over 64 characters is shortened deterministically and mapped back on call', async () => {
    const { client } = await connect();
    const full = `longnames__${LONG_TOOL_NAME}`;
    expect(full.length).toBeGreaterThan(64);
    const listed = (await client.listTools()).tools
      .map((t) => t.name)
      .filter((n) => n.startsWith('longnames__summ'));
    expect(listed).toEqual([exposedName('longnames', LONG_TOOL_NAME)]);
    expect(listed[0]).toHaveLength(64);
    const result = await client.callTool({ name: listed[0] as string });
    expect(textOf(result)).toBe('long name answered');
  });

  it('one client session keeps one upstream session, so a stateful server counts on', async () => {
    const before = fleet.stateful?.sessionsOpened() ?? 0;
    const { client } = await connect();
    const counts = [];
    for (let i = 0; i < 3; i += 1)
      counts.push(textOf(await client.callTool({ name: 'stateful__increment' })));
    expect(counts).toEqual(['1', '2', '3']);
    expect(textOf(await client.callTool({ name: 'legacy__increment' }))).toBe('1');
    expect(textOf(await client.callTool({ name: 'legacy__increment' }))).toBe('2');
    expect((fleet.stateful?.sessionsOpened() ?? 0) - before).toBe(1);
    // Another client session has its own upstream session.
    const other = await connect();
    expect(textOf(await other.client.callTool({ name: 'stateful__increment' }))).toBe('1');
  });

  it('injects the server credential; the client never sends nor sees it, and its own key stays here', async () => {
    const { client } = await connect();
    const mark = fleet.creds?.requests.length ?? 0;
    const tools = await client.listTools();
    const result = await client.callTool({ name: 'creds__whoami' });
    expect(textOf(result)).toContain('authorized');
    expect(textOf(result)).toContain('x-upstream-key');
    const upstream = fleet.creds?.requests.slice(mark) ?? [];
    expect(upstream.length).toBeGreaterThan(0);
    for (const r of upstream) {
      expect(r.headers['x-upstream-key']).toBe(UPSTREAM_SECRET);
      expect(JSON.stringify(r.headers)).not.toContain(caller.apiKey);
    }
    expect(JSON.stringify([tools, result])).not.toContain(UPSTREAM_SECRET);
  });

  it('a session belongs to the key that opened it; another key gets 404', async () => {
    const { transport } = await connect();
    const other = await h.createCaller();
    const res = await request(url)
      .post('/mcp')
      .set('authorization', `Bearer ${other.apiKey}`)
      .set('mcp-session-id', transport.sessionId as string)
      .set('accept', 'application/json, text/event-stream')
      .send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(res.status).toBe(404);
    expect(res.body.error).toMatchObject({ code: -32001 });
  });

  it('a key revoked while its session is open is refused on the next request', async () => {
    const { client, transport } = await connect();
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    const revoked = await request(h.app)
      .post('/api/v1/auth/api-keys/revoke')
      .set('cookie', caller.cookie)
      .set('origin', PUBLIC_URL)
      .send({ key_id: caller.apiKeyId });
    expect(revoked.status).toBe(200);
    const res = await request(url)
      .post('/mcp')
      .set('authorization', `Bearer ${caller.apiKey}`)
      .set('mcp-session-id', transport.sessionId as string)
      .set('accept', 'application/json, text/event-stream')
      .send({ jsonrpc: '2.0', id: 9, method: 'tools/list' });
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ error: 'invalid api key' });
  });

  it('without a key /mcp is refused with 401 missing api key', async () => {
    const res = await request(url)
      .post('/mcp')
      .set('accept', 'application/json, text/event-stream')
      .send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} });
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ error: 'missing api key' });
  });
});

describe('resumable streams', () => {
  it('a call whose SSE stream was cut is resumed with Last-Event-ID and its result arrives', async () => {
    const { client, transport } = await connect();
    await client.listTools();
    const headers = {
      authorization: `Bearer ${caller.apiKey}`,
      'mcp-session-id': transport.sessionId as string,
      'mcp-protocol-version': transport.protocolVersion ?? '2025-11-25',
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
    };
    const call = {
      jsonrpc: '2.0',
      id: 77,
      method: 'tools/call',
      params: { name: 'slow__sleep', arguments: { ms: 800 } },
    };
    const cut = new AbortController();
    const first = await fetch(`${url}/mcp`, {
      method: 'POST',
      headers,
      body: JSON.stringify(call),
      signal: cut.signal,
    });
    expect(first.headers.get('content-type')).toContain('text/event-stream');
    // The priming event carries the id to resume from; then the client loses the stream.
    const reader = (first.body as ReadableStream<Uint8Array>).getReader();
    const primed = new TextDecoder().decode((await reader.read()).value);
    const lastEventId = /^id: (.+)$/m.exec(primed)?.[1];
    expect(lastEventId).toBeDefined();
    cut.abort();
    // Until the server has seen the cut, the stream still counts as connected
    // and a resume is 409; the SDK's client waits (1 s by default) before it
    // reconnects, so this one retries for a moment too.
    const resume = () =>
      fetch(`${url}/mcp`, { method: 'GET', headers: { ...headers, 'last-event-id': lastEventId as string } });
    let resumed = await resume();
    for (let i = 0; resumed.status === 409 && i < 40; i++) {
      await resumed.body?.cancel();
      await new Promise((r) => setTimeout(r, 50));
      resumed = await resume();
    }
    expect(resumed.status).toBe(200);
    const text = await resumed.text();
    expect(text).toContain('"id":77');
    expect(text).toContain('slept 800');
  });
});

describe('every call is recorded and budgeted', () => {
  it('a tool call is a ledger record with the server price; past the budget the call is refused', async () => {
    const { client } = await connect(caller.apiKey, { 'x-project-id': 'proj-mcp' });
    expect(textOf(await client.callTool({ name: 'longnames__short' }))).toBe('short answered');
    expect(textOf(await client.callTool({ name: 'longnames__short' }))).toBe('short answered');
    const refused = await mcpErrorOf(client.callTool({ name: 'longnames__short' }));
    expect(refused.code).toBe(MCP_GATEWAY_ERRORS.rate_limited);
    expect(refused.message).toMatch(/spent/);
    const rows = await mcpRows(caller.userId);
    expect(rows).toEqual([
      expect.objectContaining({
        apiKeyId: caller.apiKeyId,
        projectId: 'proj-mcp',
        endpoint: 'mcp',
        provider: 'mcp',
        model: 'longnames/short',
        status: 200,
        totalTokens: 0,
        costMicros: 1000n,
      }),
      expect.objectContaining({ model: 'longnames/short', costMicros: 1000n }),
    ]);
  });
});

describe('arguments and results', () => {
  it('are not written anywhere by default; a project in payload_log_projects gets them in the log, redacted', async () => {
    const secret = `sk-live-${caller.apiKeyId}`;
    const args = { text: `payload of ${caller.apiKeyId}`, api_key: secret };
    const plain = await connect();
    await plain.client.callTool({ name: 'stateful__echo', arguments: args });
    expect(h.logs.text()).not.toContain(`payload of ${caller.apiKeyId}`);
    const audited = await connect(caller.apiKey, { 'x-project-id': 'audited' });
    await audited.client.callTool({ name: 'stateful__echo', arguments: args });
    const lines = h.logs.lines.filter((l) => l.includes('mcp call payload') && l.includes(caller.apiKeyId));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`payload of ${caller.apiKeyId}`);
    expect(lines[0]).toContain('[REDACTED]');
    expect(h.logs.text()).not.toContain(secret);
  });
});

describe('a failing server fails its own calls only', () => {
  it('a slow server times out that call; the next call to it still works', async () => {
    const { client } = await connect();
    const err = await mcpErrorOf(client.callTool({ name: 'slow__sleep', arguments: { ms: 6000 } }));
    expect(err.code).toBe(ErrorCode.RequestTimeout);
    expect(textOf(await client.callTool({ name: 'slow__sleep', arguments: { ms: 1 } }))).toBe('slept 1');
    const rows = await mcpRows(caller.userId);
    expect(rows.map((r) => [r.model, r.status, r.costMicros])).toEqual([
      ['slow/sleep', 504, 0n],
      ['slow/sleep', 200, 0n],
    ]);
  });

  it('a tool error is the tool result; a malformed answer is an MCP error; other servers keep working', async () => {
    const { client } = await connect();
    const failed = await client.callTool({ name: 'failing__fail' });
    expect(failed.isError).toBe(true);
    const crashed = await mcpErrorOf(client.callTool({ name: 'failing__crash' }));
    expect(crashed.code).toBe(MCP_GATEWAY_ERRORS.upstream_unavailable);
    expect(textOf(await client.callTool({ name: 'stateful__echo', arguments: { text: 'still here' } }))).toBe(
      'still here',
    );
  });

  it('a result over max_result_bytes is refused for that call', async () => {
    const { client } = await connect();
    const err = await mcpErrorOf(client.callTool({ name: 'slow__big', arguments: { bytes: 50_000 } }));
    expect(err.code).toBe(MCP_GATEWAY_ERRORS.result_too_large);
    expect(textOf(await client.callTool({ name: 'slow__big', arguments: { bytes: 10 } }))).toBe(
      'x'.repeat(10),
    );
  });

  it('a server outage: its calls fail with an MCP error, its circuit opens, the others are listed and work', async () => {
    const { client } = await connect();
    expect(textOf(await client.callTool({ name: 'doomed__increment' }))).toBe('1');
    await fleet.doomed?.close();
    const first = await mcpErrorOf(client.callTool({ name: 'doomed__increment' }));
    expect(first.code).toBe(MCP_GATEWAY_ERRORS.upstream_unavailable);
    await mcpErrorOf(client.callTool({ name: 'doomed__increment' }));
    const third = await mcpErrorOf(client.callTool({ name: 'doomed__increment' }));
    expect(third.message).toMatch(/circuit is open/);
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).not.toContain('doomed__increment');
    expect(names).toContain('stateful__increment');
    expect(textOf(await client.callTool({ name: 'stateful__increment' }))).toBe('1');
    const metrics = await request(h.app).get('/metrics');
    expect(metrics.text).toMatch(
      /mcp_tool_calls_total\{server="doomed",tool="increment",result="upstream_error"[^}]*\} 2/,
    );
    expect(metrics.text).toMatch(
      /mcp_tool_calls_total\{server="doomed",tool="increment",result="circuit_open"[^}]*\} 1/,
    );
  });
});
