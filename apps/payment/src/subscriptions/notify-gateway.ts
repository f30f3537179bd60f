import type { Logger } from '@platform/logging';

/** Time one notice may take; it never delays the webhook's answer (fire and forget). */
const NOTIFY_TIMEOUT_MS = 2_000;
const ATTEMPTS = 3;

/**
 * Tells the gateway that a user's subscription changed, so a paid lane sees
 * a cancellation within seconds instead of at its cache's expiry:
 * `POST GATEWAY_SUBSCRIPTION_NOTIFY_URL {"user_id"}` with the gateway's
 * service token. Best effort by design: the webhook is answered without
 * waiting, a failed notice is retried twice and then logged, and the
 * gateway's cache expiry bounds how long a missed notice matters
 * (docs/billing.md, paid lanes). Without a URL and token: a no-op.
 */
export function createGatewayNotifier(opts: {
  url: string | undefined;
  token: string | undefined;
  logger: Logger;
  fetch?: typeof fetch;
}): ((userId: string) => void) | undefined {
  const { url, token } = opts;
  if (!url || !token) return undefined;
  const doFetch = opts.fetch ?? fetch;
  async function send(userId: string): Promise<void> {
    let last = '';
    for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
      try {
        const res = await doFetch(url as string, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ user_id: userId }),
          signal: AbortSignal.timeout(NOTIFY_TIMEOUT_MS),
        });
        await res.body?.cancel();
        if (res.ok) return;
        last = `status ${res.status}`;
        if (res.status < 500) break;
      } catch (err) {
        last = err instanceof Error ? err.message : String(err);
      }
      await new Promise((r) => setTimeout(r, 200 * attempt));
    }
    opts.logger.warn(
      { userId, err: last },
      'gateway not told of a subscription change; its cache expires it',
    );
  }
  return (userId) => {
    void send(userId);
  };
}
