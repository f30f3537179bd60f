import { AppError, type ErrorDetail } from '@platform/errors';

/**
 * True when the URL's host is on the allowlist. An entry is a host name
 * (`app.example.com`, any port), a host with port (`localhost:3000`), or a
 * wildcard (`*.example.com`, every subdomain but not the apex). Case-insensitive.
 */
export function isHostAllowed(url: string, allowed: readonly string[]): boolean {
  const { hostname, host } = new URL(url);
  return allowed.some((raw) => {
    const entry = raw.toLowerCase();
    if (entry.startsWith('*.')) return hostname.endsWith(entry.slice(1));
    return entry.includes(':') ? host === entry : hostname === entry;
  });
}

/**
 * Refuses redirect URLs whose host is not on PAYMENT_ALLOWED_REDIRECT_HOSTS
 * (400 `redirect host not allowed`, `details` names the fields). Without an
 * allowlist every absolute http(s) URL is accepted; the schemas already refused
 * every other form.
 */
export function assertRedirectsAllowed(
  urls: Record<string, string>,
  allowed: readonly string[] | undefined,
): void {
  if (!allowed || allowed.length === 0) return;
  const details: ErrorDetail[] = Object.entries(urls)
    .filter(([, url]) => !isHostAllowed(url, allowed))
    .map(([path]) => ({ path, message: 'host is not on the redirect allowlist' }));
  if (details.length > 0) throw new AppError('redirect_host_not_allowed', { details });
}
