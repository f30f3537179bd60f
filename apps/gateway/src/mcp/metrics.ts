import { Counter, Gauge, Histogram, type Registry } from '@platform/logging';

/** How a tool call ended, as the metrics label it. */
export type ToolCallResult =
  | 'ok'
  | 'tool_error'
  | 'refused'
  | 'rate_limited'
  | 'circuit_open'
  | 'timeout'
  | 'upstream_error'
  | 'too_large';

export type McpMetrics = {
  call(
    server: string,
    tool: string,
    result: ToolCallResult,
    seconds: number,
    bytes?: { in: number; out: number },
  ): void;
  sessions: Gauge<string>;
};

/** Per server and tool: calls by result, their duration, bytes in and out; open client sessions. */
export function createMcpMetrics(registry: Registry): McpMetrics {
  const registers = [registry];
  const calls = new Counter({
    name: 'mcp_tool_calls_total',
    help: 'MCP tool calls through the gateway, by server, tool and result',
    labelNames: ['server', 'tool', 'result'] as const,
    registers,
  });
  const duration = new Histogram({
    name: 'mcp_tool_call_duration_seconds',
    help: 'Duration of MCP tool calls that reached the server, by server and tool',
    labelNames: ['server', 'tool'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers,
  });
  const bytes = new Counter({
    name: 'mcp_tool_call_bytes_total',
    help: 'Bytes of MCP tool call arguments (in) and results (out), by server, tool and direction',
    labelNames: ['server', 'tool', 'direction'] as const,
    registers,
  });
  const sessions = new Gauge({
    name: 'mcp_sessions_open',
    help: 'MCP client sessions open on this instance',
    registers,
  });
  return {
    sessions,
    call(server, tool, result, seconds, io) {
      calls.inc({ server, tool, result });
      if (io) {
        duration.observe({ server, tool }, seconds);
        bytes.inc({ server, tool, direction: 'in' }, io.in);
        bytes.inc({ server, tool, direction: 'out' }, io.out);
      }
    },
  };
}
