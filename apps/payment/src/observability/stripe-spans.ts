import { endSpan, startSpan } from '@platform/service-kit';

/**
 * Stripe's object ids (`cus_Nf0…`, `sub_1Q…`): a prefix, `_`, then a tail with
 * a digit or a capital, which resource names (`billing_portal`,
 * `balance_transactions`: lower case only) never have. `{id}` in span names.
 */
function isStripeId(segment: string): boolean {
  const cut = segment.indexOf('_');
  if (cut <= 0) return false;
  for (let i = cut + 1; i < segment.length; i++) {
    const c = segment.charCodeAt(i);
    if ((c >= 48 && c <= 57) || (c >= 65 && c <= 90)) return true;
  }
  return false;
}

/** `/v1/customers/cus_123/balance` -> `/v1/customers/{id}/balance`. */
export function stripePathTemplate(pathname: string): string {
  return pathname
    .split('/')
    .map((s) => (isStripeId(s) ? '{id}' : s))
    .join('/');
}

type Fetch = (url: string | URL | Request, init?: RequestInit) => Promise<Response>;

/**
 * `fetch` for Stripe's fetch HTTP client with one CLIENT span per HTTP call
 * (each network retry of the SDK is its own span): method, path template,
 * status, and `error.type` when Stripe answered an error or the call failed.
 * No body, no query, no key: ids stay in `url.path` only as templates.
 */
export function tracedStripeFetch(inner: Fetch): Fetch {
  return async (url, init) => {
    const href = url instanceof Request ? url.url : String(url);
    const method = init?.method ?? (url instanceof Request ? url.method : 'GET');
    const template = stripePathTemplate(new URL(href).pathname);
    const span = startSpan(
      `stripe ${method} ${template}`,
      { 'http.request.method': method, 'url.template': template, 'server.address': new URL(href).hostname },
      'client',
    );
    try {
      const res = await inner(url, init);
      endSpan(
        span,
        { 'http.response.status_code': res.status },
        res.status >= 400 ? String(res.status) : undefined,
      );
      return res;
    } catch (err) {
      endSpan(span, undefined, err instanceof Error ? err.name : 'error');
      throw err;
    }
  };
}
