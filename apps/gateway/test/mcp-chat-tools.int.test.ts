import { chatAgentTurns } from '@platform/testing';
import request from 'supertest';
import { type AiHarness, PUBLIC_URL, type TestCaller, useAiHarness } from './support/ai-harness';
import { type McpFleet, startMcpFleet } from './support/mcp';

let fleet: McpFleet;
let h: AiHarness;
let caller: TestCaller;

beforeAll(async () => {
  fleet = await startMcpFleet({ notes: { kind: 'stateful' } });
});
afterAll(async () => {
  await fleet.close();
});

useAiHarness(
  () => ({ MCP_CONFIG: fleet.configFile({}, { notes: { price_per_call: 0.002 } }) }),
  (state) => {
    ({ h, caller } = state);
  },
);

const mcpTool = { type: 'mcp', server_label: 'notes', require_approval: 'never' };

function respond(body: Record<string, unknown>) {
  return request(h.app)
    .post('/v1/responses')
    .set('authorization', `Bearer ${caller.apiKey}`)
    .send({ model: 'free', input: 'Echo hello with the notes tool.', ...body });
}

type Item = {
  type: string;
  name?: string;
  output?: string;
  server_label?: string;
  content?: Array<{ text: string }>;
};

describe('/v1/responses with tools of type mcp', () => {
  it('offers the allowed tools, runs the model call through the MCP gateway, loops until the answer; each step recorded', async () => {
    h.openai.respond(
      chatAgentTurns(
        { tool: 'notes__echo', inputs: [{ text: 'hello' }], answerPrefix: 'Echoed:' },
        { usage: { prompt_tokens: 10, completion_tokens: 5 } },
      ),
    );
    const res = await respond({ tools: [mcpTool] });
    expect(res.status).toBe(200);
    const output = res.body.output as Item[];
    expect(output.map((i) => i.type)).toEqual(['mcp_list_tools', 'mcp_call', 'message']);
    expect(output[1]).toMatchObject({ server_label: 'notes', name: 'echo', output: 'hello' });
    expect(output[2]?.content?.[0]?.text).toBe('Echoed: hello');
    // Two model turns: the second carried the tool's result.
    const turns = h.openaiRequests();
    expect(turns).toHaveLength(2);
    expect(JSON.stringify(turns[1]?.body)).toContain('"role":"tool"');
    await h.usage.flush();
    const rows = await h.prisma.usageRecord.findMany({
      where: { userId: caller.userId },
      orderBy: { id: 'asc' },
    });
    expect(rows.map((r) => [r.endpoint, r.model])).toEqual(
      expect.arrayContaining([
        ['mcp', 'notes/echo'],
        ['responses', 'free-a'],
      ]),
    );
    expect(rows.find((r) => r.endpoint === 'mcp')?.costMicros).toBe(2000n);
    // Both turns (10 prompt + 5 completion tokens each) in the request's record, each priced (1 and 2 micro-units a token).
    expect(rows.find((r) => r.endpoint === 'responses')).toMatchObject({
      promptTokens: 20,
      completionTokens: 10,
      totalTokens: 30,
      costMicros: 40n,
    });
  });

  it("allowed_tools and the key's policy limit what the model is offered", async () => {
    const policy = await request(h.app)
      .put('/api/v1/mcp/policies')
      .set('cookie', caller.cookie)
      .set('origin', PUBLIC_URL)
      .send({ scope: 'api_key', subject: caller.apiKeyId, allow: null, deny: ['notes/increment'] });
    expect(policy.status).toBe(200);
    h.openai.set({ content: 'no tools needed' });
    const res = await respond({ tools: [{ ...mcpTool, allowed_tools: ['echo', 'increment'] }] });
    expect(res.status).toBe(200);
    const offered = (
      (h.openaiRequests()[0]?.body as { tools?: Array<{ function: { name: string } }> } | undefined)?.tools ??
      []
    ).map((t) => t.function.name);
    expect(offered).toEqual(['notes__echo']);
  });

  it('an unknown server_label is a 404 naming it; stream with mcp tools is refused', async () => {
    const unknown = await respond({ tools: [{ ...mcpTool, server_label: 'nope' }] });
    expect(unknown.status).toBe(404);
    const streamed = await respond({ tools: [mcpTool], stream: true });
    expect(streamed.status).toBe(400);
    expect(h.openaiRequests()).toHaveLength(0);
  });

  it('/v1/chat/completions takes the same tools entry: the loop runs and the calls are in mcp_calls', async () => {
    h.openai.respond(
      chatAgentTurns({ tool: 'notes__echo', inputs: [{ text: 'from chat' }], answerPrefix: 'Echoed:' }),
    );
    const res = await request(h.app)
      .post('/v1/chat/completions')
      .set('authorization', `Bearer ${caller.apiKey}`)
      .send({ model: 'free', messages: [{ role: 'user', content: 'Echo with notes.' }], tools: [mcpTool] });
    expect(res.status).toBe(200);
    expect(res.body.choices[0].message.content).toBe('Echoed: from chat');
    expect(res.body.mcp_calls).toEqual([
      expect.objectContaining({ type: 'mcp_call', server_label: 'notes', name: 'echo', output: 'from chat' }),
    ]);
    // The upstream never saw a tool of type mcp, only the function it stands for.
    for (const r of h.openaiRequests()) expect(JSON.stringify(r.body)).not.toContain('"type":"mcp"');
  });
});
