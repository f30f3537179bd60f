import net from 'node:net';
import tls from 'node:tls';

/** Longest the greeting check waits for the server's first reply. */
const GREETING_TIMEOUT_MS = 5_000;
/** More than any greeting (RFC 5321 allows multi-line 220s); a server that sends more is not answering SMTP. */
const MAX_GREETING_BYTES = 8_192;

/**
 * Does the SMTP server of `url` accept a connection? Connects (TLS for
 * `smtps:` or `?secure=true`, as nodemailer does), reads the greeting and
 * says QUIT: true for a 220 greeting, false for any other reply, a connection
 * closed before it, or no reply within the timeout; it rejects with the
 * socket's error (e.g. `ECONNREFUSED`) when the connection fails, as
 * nodemailer's verify() did (readiness counts that as down, the start-up
 * warning names the code).
 *
 * Readiness and the start-up warning need only this, without nodemailer: its
 * ~3 MB of heap (modules, code) then loads in a worker when the first mail is
 * sent, not at start nor at the first readiness probe (issue 46). It does not
 * log in (nodemailer's verify() did): wrong credentials show as the send's
 * error, not as readiness.
 */
export function smtpGreets(url: string, timeoutMs = GREETING_TIMEOUT_MS): Promise<boolean> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch (err) {
    return Promise.reject(err);
  }
  const secure = parsed.protocol === 'smtps:' || parsed.searchParams.get('secure') === 'true';
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  const port = Number(parsed.port) || (secure ? 465 : 587);
  return new Promise((resolve, reject) => {
    const socket = secure
      ? tls.connect({
          host,
          port,
          servername: net.isIP(host) ? undefined : host,
          rejectUnauthorized: parsed.searchParams.get('tls.rejectUnauthorized') !== 'false',
        })
      : net.connect({ host, port });
    let settled = false;
    let received = '';
    const finish = (answer: boolean | Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (answer === true) socket.end('QUIT\r\n');
      else socket.destroy();
      // Whatever comes after (the 221, a reset) is not waited for.
      socket.on('error', () => undefined);
      socket.setTimeout(timeoutMs, () => socket.destroy());
      if (typeof answer !== 'boolean') reject(answer);
      else resolve(answer);
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      received += chunk;
      // A reply is one or more lines "ddd-text"; its last line is "ddd text" (RFC 5321 4.2.1).
      for (let start = 0, end = received.indexOf('\n'); end !== -1; end = received.indexOf('\n', start)) {
        const line = received.slice(start, end);
        start = end + 1;
        if (line.length >= 4 && line[3] === '-') continue;
        finish(line.startsWith('220'));
        return;
      }
      if (received.length > MAX_GREETING_BYTES) finish(false);
    });
    socket.on('error', (err) => finish(err));
    socket.on('close', () => finish(false));
  });
}
