import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadMcpConfig, McpConfigError, parseMcpConfig, SERVER_NAME_PATTERN } from './config';

// The MCP config file: its defaults, what it refuses, and how it says so.

describe('MCP config', () => {
  it('no file means no servers and the documented defaults', () => {
    const config = loadMcpConfig(undefined);
    expect(config.servers).toEqual([]);
    expect(config).toEqual(
      expect.objectContaining({
        calls_per_minute_per_key: 600,
        timeout_ms: 60_000,
        max_result_bytes: 4 * 1024 * 1024,
        breaker: { failures: 5, cooldown_ms: 30_000 },
      }),
    );
    expect(config.user_servers).toEqual({ enabled: true, allowed_hosts: [], max_per_user: 20 });
  });

  it('a server gets the streamable-http transport, no headers, a free price and default access', () => {
    const [server] = parseMcpConfig(
      { servers: [{ name: 'docs', url: 'https://mcp.example/mcp' }] },
      't',
    ).servers;
    expect(server).toEqual({
      name: 'docs',
      url: 'https://mcp.example/mcp',
      transport: 'streamable-http',
      headers: {},
      price_per_call: 0,
      default_allowed: true,
    });
  });

  it('server names are short lower-case prefixes that cannot contain the tool separator', () => {
    for (const ok of ['a', 'docs', 'my-server-2']) expect(SERVER_NAME_PATTERN.test(ok)).toBe(true);
    for (const bad of ['Docs', 'my__server', '-x', 'x-', 'a'.repeat(33), 'a b'])
      expect(SERVER_NAME_PATTERN.test(bad)).toBe(false);
  });

  it('refuses a non-http URL (no stdio commands), naming the field', () => {
    expect(() => parseMcpConfig({ servers: [{ name: 'x', url: 'file:///bin/sh' }] }, 'mcp.json')).toThrow(
      /invalid MCP config \(mcp\.json\):\n {2}- servers\.0\.url: /,
    );
  });

  it('refuses two servers of one name', () => {
    const servers = [
      { name: 'x', url: 'https://a.example' },
      { name: 'x', url: 'https://b.example' },
    ];
    expect(() => parseMcpConfig({ servers }, 't')).toThrow('servers.1.name: duplicate');
  });

  it('a file that is not JSON is refused with its path', () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'mcp-config-')), 'mcp.json');
    writeFileSync(file, '{ not json');
    expect(() => loadMcpConfig(file)).toThrow(McpConfigError);
    expect(() => loadMcpConfig(file)).toThrow(`invalid MCP config (${file})`);
  });
});
