import { corsOrigins, originOf, trustedOrigins } from './origins';

// Which origins the gateway trusts: its own public URL and the operator's CORS list.

describe('origins', () => {
  it('originOf keeps scheme, host and port, and drops path, query and credentials', () => {
    expect(originOf('https://console.example.com/app?x=1')).toBe('https://console.example.com');
    expect(originOf('http://127.0.0.1:8080/')).toBe('http://127.0.0.1:8080');
    expect(originOf('https://user:pw@example.com/')).toBe('https://example.com');
  });

  it('originOf refuses what is not a URL with an origin', () => {
    expect(originOf('not a url')).toBeUndefined();
    expect(originOf('')).toBeUndefined();
    expect(originOf('file:///etc/passwd')).toBeUndefined();
  });

  it('the CORS list keeps the origins that parse, once each', () => {
    const env = {
      GATEWAY_CORS_ORIGINS: ['https://a.example/', 'https://a.example', 'junk', 'http://b.example:3000'],
    };
    expect([...corsOrigins(env)]).toEqual(['https://a.example', 'http://b.example:3000']);
  });

  it("trusted origins are the CORS list plus the gateway's own public origin", () => {
    const env = {
      GATEWAY_PUBLIC_URL: 'https://gw.example/base',
      GATEWAY_CORS_ORIGINS: ['https://a.example'],
    };
    expect([...trustedOrigins(env)].sort()).toEqual(['https://a.example', 'https://gw.example']);
  });
});
