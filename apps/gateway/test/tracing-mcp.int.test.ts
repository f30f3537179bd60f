import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startTracing, type Tracing } from '@platform/service-kit';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '@platform/testing';
import { type TestCaller, useAiHarness } from './support/ai-harness';
import { connectGatewayClient, type McpFleet, startMcpFleet, textOf } from './support/mcp';

/**
 * Issue 43, traces of MCP tool calls: each `tools/call` through /mcp is a
 * CLIENT span `execute_tool <tool>` (GenAI conventions) under the request's
 * span, with the server, the result and, on failure, `error.type`.
 */
let receiver: OtlpReceiver;
let tracing: Tracing | undefined;
let fleet: McpFleet;
let caller: TestCaller;
let url: string;
let client: Client | undefined;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  const env = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' };
  Object.assign(process.env, env);
  tracing = startTracing({ service: 'gateway', env });
  fleet = await startMcpFleet({ stateful: { kind: 'stateful' }, failing: { kind: 'failing' } });
});
afterAll(async () => {
  await client?.close().catch(() => {});
  await fleet?.close();
  await tracing?.shutdown();
  await receiver?.close();
});
useAiHarness(
  () => ({ MCP_CONFIG: fleet.configFile({}, {}) }),
  (state) => {
    ({ caller, url } = state);
  },
  { listen: true },
);

it('a tool call is an execute_tool span under the request span', async () => {
  ({ client } = await connectGatewayClient(url, caller.apiKey));
  expect(textOf(await client.callTool({ name: 'stateful__increment' }))).toBe('1');
  await tracing?.flush();
  const spans = await receiver.waitFor((all) => all.some((s) => s.name === 'execute_tool increment'));
  const tool = spans.find((s) => s.name === 'execute_tool increment') as ReceivedSpan;
  expect(tool.kind).toBe(3);
  expect(tool.attributes).toMatchObject({
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': 'increment',
    'gateway.mcp.server': 'stateful',
    'gateway.mcp.result': 'ok',
  });
  expect(tool.attributes['error.type']).toBeUndefined();
  const parent = spans.find((s) => s.spanId === tool.parentSpanId);
  expect(parent).toMatchObject({ kind: 2, name: 'POST /mcp', traceId: tool.traceId });
});

it('a tool that fails: its span carries the result as error.type', async () => {
  ({ client } = await connectGatewayClient(url, caller.apiKey));
  await client.callTool({ name: 'failing__fail' });
  await tracing?.flush();
  const spans = await receiver.waitFor((all) => all.some((s) => s.name === 'execute_tool fail'));
  const tool = spans.find((s) => s.name === 'execute_tool fail') as ReceivedSpan;
  expect(tool.attributes['gateway.mcp.server']).toBe('failing');
  expect(tool.attributes['gateway.mcp.result']).not.toBe('ok');
  expect(tool.attributes['error.type']).toBe(tool.attributes['gateway.mcp.result']);
  expect(tool.statusCode).toBe(2);
});
