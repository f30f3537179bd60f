import request from 'supertest';
import { type AiHarness, type TestCaller, useAiHarness } from './support/ai-harness';
import { connectGatewayClient, type McpFleet, startMcpFleet, textOf } from './support/mcp';

let fleet: McpFleet;
let h: AiHarness;
let caller: TestCaller;
let url: string;

beforeAll(async () => {
  fleet = await startMcpFleet({ notes: { kind: 'stateful' } });
});
afterAll(async () => {
  await fleet.close();
});

useAiHarness(
  () => ({ MCP_CONFIG: fleet.configFile({ session_idle_ms: 300 }) }),
  (state) => {
    ({ h, caller, url } = state);
  },
  { listen: true },
);

/** DELETE requests the upstream server received since `mark`: the gateway ending its upstream sessions. */
const upstreamDeletes = (mark: number) =>
  (fleet.notes?.requests.slice(mark) ?? []).filter((r) => r.method === 'DELETE').length;

async function waitFor(check: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 100; i += 1) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('condition not met within 10 s');
}

describe('MCP client sessions', () => {
  it("the client's DELETE ends its session and the upstream session with it", async () => {
    const mark = fleet.notes?.requests.length ?? 0;
    const { client, transport } = await connectGatewayClient(url, caller.apiKey);
    expect(textOf(await client.callTool({ name: 'notes__increment' }))).toBe('1');
    const id = transport.sessionId as string;
    await transport.terminateSession();
    await waitFor(() => upstreamDeletes(mark) === 1);
    const after = await request(url)
      .post('/mcp')
      .set('authorization', `Bearer ${caller.apiKey}`)
      .set('mcp-session-id', id)
      .set('accept', 'application/json, text/event-stream')
      .send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    expect(after.status).toBe(404);
    await client.close();
  });

  it('a session whose client went away (no DELETE) is closed after session_idle_ms, its upstream session too', async () => {
    const mark = fleet.notes?.requests.length ?? 0;
    const { client, transport } = await connectGatewayClient(url, caller.apiKey);
    expect(textOf(await client.callTool({ name: 'notes__increment' }))).toBe('1');
    const id = transport.sessionId as string;
    // While the client holds its SSE stream the session is in use, however long; closing drops the stream only.
    await client.close();
    await waitFor(() => upstreamDeletes(mark) === 1);
    const res = await request(url)
      .post('/mcp')
      .set('authorization', `Bearer ${caller.apiKey}`)
      .set('mcp-session-id', id)
      .set('accept', 'application/json, text/event-stream')
      .send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    expect(res.status).toBe(404);
    expect(h.deps.mcp.sessions.size()).toBe(0);
  });
});
