// Claude Code (@anthropic-ai/claude-code, unmodified from npm) using the gateway's MCP
// endpoint: `--mcp-config` names only the gateway's /mcp URL and a gateway key. The model
// (the Anthropic fake behind the gateway's /v1/messages) asks for the allowed MCP tool;
// Claude Code calls it through the gateway, which calls the real MCP test server.
// Same isolation as claude-code.int.test.ts: throwaway HOME, non-essential traffic off,
// every URL on loopback.

import {
  type AiHarness,
  PUBLIC_URL,
  startAiHarness,
  TEST_LANES,
  type TestCaller,
  writeTempJson,
} from '@platform/gateway/testing';
import { anthropicAgentTurns, type McpTestServer, startMcpTestServer } from '@platform/testing';
import { type ClaudeResult, runClaudeCode } from './support/claude';

const MODEL = 'claude-sonnet-4-5';

const LANES = {
  lanes: { premium: { default_model: MODEL, targets: [{ provider: 'anthropic', model: MODEL }] } },
  media: TEST_LANES.media,
  prices: { [`anthropic/${MODEL}`]: { input: 3, output: 15 } },
};

/** Claude Code names MCP tools `mcp__<server in the config>__<tool>`; the gateway's are `<server>__<tool>`. */
const ALLOWED = 'mcp__gateway__notes__echo';
const DENIED = 'mcp__gateway__notes__increment';

let h: AiHarness;
let url: string;
let caller: TestCaller;
let notes: McpTestServer;

beforeAll(async () => {
  notes = await startMcpTestServer('stateful');
  h = await startAiHarness({
    AI_LANES_CONFIG: writeTempJson('lanes.json', LANES),
    AI_ALLOWED_LANES: 'premium',
    AI_UPSTREAM_TIMEOUT_MS: '20000',
    MCP_CONFIG: writeTempJson('mcp.json', { servers: [{ name: 'notes', url: notes.endpoint }] }),
  });
  ({ url } = await h.listen());
  caller = await h.createCaller();
  // The key may call notes/echo only: increment must not even be listed to Claude Code.
  const policy = await fetch(`${url}/api/v1/mcp/policies`, {
    method: 'PUT',
    headers: { cookie: caller.cookie, origin: PUBLIC_URL, 'content-type': 'application/json' },
    body: JSON.stringify({ scope: 'api_key', subject: caller.apiKeyId, allow: ['notes/echo'], deny: [] }),
  });
  expect(policy.status).toBe(200);
}, 120_000);

afterAll(async () => {
  await h?.close();
  await notes?.close();
});

function runClaude(mcpConfig: string): Promise<ClaudeResult> {
  const args = ['-p', 'Echo "from claude" with the notes tool.', '--model', MODEL, '--mcp-config', mcpConfig];
  return runClaudeCode({
    args: [...args, '--allowedTools', 'mcp__gateway', '--output-format', 'json'],
    baseUrl: url,
    apiKey: caller.apiKey,
    env: {
      // MCP tools in the request's tool list, not deferred behind ToolSearch (which the fake does not script).
      ENABLE_TOOL_SEARCH: 'false',
    },
  });
}

describe('Claude Code with the gateway as its MCP server', () => {
  it('lists and calls an allowed tool through /mcp and cannot see a denied one', async () => {
    // The fake asks for the tool only if Claude Code offered it; then quotes its result.
    h.anthropic.respond(
      anthropicAgentTurns({
        tool: ALLOWED,
        inputs: [{ text: 'from claude' }],
        answerPrefix: 'The tool said:',
      }),
    );
    const mcpConfig = writeTempJson('claude-mcp.json', {
      mcpServers: {
        gateway: { type: 'http', url: `${url}/mcp`, headers: { Authorization: `Bearer ${caller.apiKey}` } },
      },
    });

    const run = await runClaude(mcpConfig);

    const detail = `exit ${run.code}\nstdout: ${run.stdout.slice(-2000)}\nstderr: ${run.stderr.slice(-2000)}`;
    expect({ code: run.code, detail }).toEqual({ code: 0, detail });
    const result = JSON.parse(run.stdout) as { is_error: boolean; result: string };
    expect(result.is_error).toBe(false);
    // The MCP server's echo came back through Claude Code to the model.
    expect(result.result).toContain('The tool said: from claude');

    const offered = h
      .anthropicRequests()
      .map((r) => ((r.body as { tools?: Array<{ name: string }> }).tools ?? []).map((t) => t.name));
    expect(offered.some((names) => names.includes(ALLOWED))).toBe(true);
    expect(offered.flat()).not.toContain(DENIED);

    await h.usage.flush();
    const calls = await h.prisma.usageRecord.findMany({ where: { userId: caller.userId, endpoint: 'mcp' } });
    expect(calls.map((c) => [c.model, c.status])).toEqual([['notes/echo', 200]]);
  }, 180_000);
});
