import { checkUserServerUrl, guardedFetch, hostAllowed, isInternalAddress } from './ssrf';

describe('user-registered MCP server addresses', () => {
  it('internal addresses are refused, public ones pass', () => {
    for (const a of [
      '127.0.0.1',
      '10.1.2.3',
      '172.20.0.5',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      'fd00::1',
      'fe80::1',
      '::ffff:127.0.0.1',
    ])
      expect(isInternalAddress(a)).toBe(true);
    for (const a of ['8.8.8.8', '1.1.1.1', '2606:4700::1111', '172.32.0.1'])
      expect(isInternalAddress(a)).toBe(false);
  });

  it('the operator allowlist opens a host or address', () => {
    expect(hostAllowed({ allowedHosts: [] }, '127.0.0.1', '127.0.0.1')).toBe(false);
    expect(hostAllowed({ allowedHosts: ['127.0.0.1'] }, '127.0.0.1', '127.0.0.1')).toBe(true);
    expect(hostAllowed({ allowedHosts: ['tools.internal'] }, 'tools.internal', '10.0.0.9')).toBe(true);
  });

  it('a name resolving to loopback is refused unless allowlisted', async () => {
    expect(await checkUserServerUrl({ allowedHosts: [] }, 'http://localhost:1/mcp')).toBe(false);
    expect(await checkUserServerUrl({ allowedHosts: ['localhost'] }, 'http://localhost:1/mcp')).toBe(true);
  });

  it('the guarded fetch refuses an internal address literal before connecting', async () => {
    const fetch = guardedFetch({ allowedHosts: [] });
    await expect(fetch('http://169.254.169.254/latest/meta-data')).rejects.toThrow(/internal address/);
    await expect(fetch('http://[::1]:9/mcp')).rejects.toThrow(/internal address/);
  });
});
