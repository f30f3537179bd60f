import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import {
  MCP_GATEWAY_ERRORS,
  notAllowed,
  rateLimited,
  timedOut,
  unknownTool,
  upstreamUnavailable,
} from './errors';

// The JSON-RPC errors one failed MCP call is answered with.

describe('MCP call errors', () => {
  it('the gateway codes sit in the implementation range -32000..-32099', () => {
    for (const code of Object.values(MCP_GATEWAY_ERRORS)) {
      expect(code).toBeLessThanOrEqual(-32000);
      expect(code).toBeGreaterThanOrEqual(-32099);
    }
  });

  it('a tool the key may not call is InvalidParams naming the tool', () => {
    const err = notAllowed('search');
    expect(err.code).toBe(ErrorCode.InvalidParams);
    expect(err.message).toContain('Tool search is not allowed for this API key');
  });

  it('an unknown tool is InvalidParams naming the tool', () => {
    const err = unknownTool('nope');
    expect(err.code).toBe(ErrorCode.InvalidParams);
    expect(err.message).toContain('Tool nope not found');
  });

  it('rate limited rounds the wait up to whole seconds', () => {
    const err = rateLimited('key call rate', 1500);
    expect(err.code).toBe(-32029);
    expect(err.data).toEqual({ retry_after_seconds: 2 });
    expect(err.message).toContain('key call rate; retry after 2 s');
  });

  it('rate limited never says to retry after 0 seconds', () => {
    expect(rateLimited('budget', 0).data).toEqual({ retry_after_seconds: 1 });
    expect(rateLimited('budget', 1000).data).toEqual({ retry_after_seconds: 1 });
  });

  it('an unreachable server and a timeout name the server', () => {
    expect(upstreamUnavailable('docs', 'is not reachable').code).toBe(-32050);
    expect(upstreamUnavailable('docs', 'is not reachable').message).toContain(
      'MCP server docs is not reachable',
    );
    const late = timedOut('docs', 250);
    expect(late.code).toBe(ErrorCode.RequestTimeout);
    expect(late.message).toContain('did not answer within 250 ms');
  });
});
