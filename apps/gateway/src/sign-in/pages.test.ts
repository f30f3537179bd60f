import type { Response } from 'express';
import { sendBadLinkPage, sendConfirmPage, sendSignedInPage } from './pages';

// The sign-in HTML pages, on a response that records what it was given.

function recorder() {
  const out = { headers: {} as Record<string, string>, status: 0, type: '', body: '' };
  const res = {
    setHeader(name: string, value: string) {
      out.headers[name.toLowerCase()] = value;
    },
    status(code: number) {
      out.status = code;
      return res;
    },
    type(t: string) {
      out.type = t;
      return res;
    },
    send(body: string) {
      out.body = body;
      return res;
    },
  };
  return { res: res as unknown as Response, out };
}

describe('sign-in pages', () => {
  it('the confirm page posts the code to the action, with a button and no script', () => {
    const { res, out } = recorder();
    sendConfirmPage(res, { code: 'abc', action: '/api/v1/auth/verify', formTargets: [] });
    expect(out.status).toBe(200);
    expect(out.type).toBe('html');
    expect(out.body).toContain('<form method="post" action="/api/v1/auth/verify">');
    expect(out.body).toContain('<input type="hidden" name="code" value="abc">');
    expect(out.body).not.toContain('name="state"');
    expect(out.body).not.toContain('<script');
  });

  it('code, state and action are escaped: a crafted link cannot inject markup', () => {
    const { res, out } = recorder();
    sendConfirmPage(res, { code: '"><script>x</script>', state: '<b>', action: '/v?a="b"', formTargets: [] });
    expect(out.body).not.toContain('<script>x');
    expect(out.body).not.toContain('<b>');
    expect(out.body).toContain('name="state" value="&lt;b&gt;"');
    expect(out.body).not.toContain('action="/v?a="b""');
  });

  it('the CSP allows no scripts and lists the form targets; nothing is cached or referred', () => {
    const { res, out } = recorder();
    sendConfirmPage(res, { code: 'c', action: '/a', formTargets: ['https://app.example.com'] });
    const csp = out.headers['content-security-policy'] ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("form-action 'self' https://app.example.com;");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('script-src');
    expect(out.headers['cache-control']).toBe('no-store');
    expect(out.headers['referrer-policy']).toBe('no-referrer');
  });

  it('signed-in is 200, a bad link 400', () => {
    const ok = recorder();
    sendSignedInPage(ok.res);
    expect(ok.out.status).toBe(200);
    expect(ok.out.body).toContain('<title>Signed in</title>');
    const bad = recorder();
    sendBadLinkPage(bad.res);
    expect(bad.out.status).toBe(400);
    expect(bad.out.body).toContain('Request a new sign-in link.');
  });
});
