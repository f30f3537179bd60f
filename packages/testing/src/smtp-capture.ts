import { SMTPServer } from 'smtp-server';

/** One message the capture server accepted, decoded enough for assertions. */
export type CapturedMessage = {
  /** Envelope sender (MAIL FROM). */
  from: string;
  /** Envelope recipients (RCPT TO). */
  to: string[];
  /** Decoded Subject header (RFC 2047 encoded words resolved). */
  subject: string;
  /** First text/plain part, transfer encoding and charset decoded; '' when absent. */
  text: string;
  /** First text/html part, decoded; '' when absent. */
  html: string;
  /** Top-level headers, lower-cased names, encoded words decoded. */
  headers: Record<string, string>;
  /** The message exactly as received. */
  raw: string;
  receivedAt: number;
};

/** An SMTP server on loopback that keeps every message it receives. */
export type SmtpCapture = {
  /** `smtp://127.0.0.1:<port>`, usable as nodemailer's transport URL or `SMTP_URL`. */
  url: string;
  host: '127.0.0.1';
  port: number;
  messages: CapturedMessage[];
  /** Resolves with the first message (already received or arriving later) matching `predicate`. */
  waitForMessage(predicate?: (m: CapturedMessage) => boolean, timeoutMs?: number): Promise<CapturedMessage>;
  /** Makes the next `times` deliveries fail with an SMTP error, e.g. 451 (temporary) or 550 (permanent). */
  failNext(opts?: { responseCode?: number; message?: string; times?: number }): void;
  close(): Promise<void>;
};

type Waiter = { predicate: (m: CapturedMessage) => boolean; resolve: (m: CapturedMessage) => void };

/** Starts a real SMTP server (smtp-server) on 127.0.0.1 with an OS-assigned port; no TLS, no auth. */
export async function startSmtpCapture(): Promise<SmtpCapture> {
  const messages: CapturedMessage[] = [];
  const waiters: Waiter[] = [];
  const failures: Array<{ responseCode: number; message: string }> = [];

  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    // Close promptly: a test's close() should not wait out the default 30 s grace period.
    closeTimeout: 100,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const failure = failures.shift();
        if (failure) {
          callback(Object.assign(new Error(failure.message), { responseCode: failure.responseCode }));
          return;
        }
        const buffer = Buffer.concat(chunks);
        const message = parseMessage(buffer, session.envelope.mailFrom, session.envelope.rcptTo);
        messages.push(message);
        for (const waiter of [...waiters]) {
          if (waiter.predicate(message)) {
            waiters.splice(waiters.indexOf(waiter), 1);
            waiter.resolve(message);
          }
        }
        callback(null);
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.server.address();
  if (address === null || typeof address === 'string') throw new Error('smtp capture has no port');
  let closing: Promise<void> | undefined;

  return {
    url: `smtp://127.0.0.1:${address.port}`,
    host: '127.0.0.1',
    port: address.port,
    messages,
    waitForMessage(predicate = () => true, timeoutMs = 5000) {
      const found = messages.find(predicate);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const waiter: Waiter = {
          predicate,
          resolve: (m) => {
            clearTimeout(timer);
            resolve(m);
          },
        };
        const timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(waiter), 1);
          reject(new Error(`no matching e-mail within ${timeoutMs} ms (${messages.length} captured)`));
        }, timeoutMs);
        timer.unref();
        waiters.push(waiter);
      });
    },
    failNext({ responseCode = 451, message = 'Temporary failure, try again later', times = 1 } = {}) {
      for (let i = 0; i < times; i++) failures.push({ responseCode, message });
    },
    close() {
      closing ??= new Promise<void>((resolve) => server.close(() => resolve()));
      return closing;
    },
  };
}

type Entity = { headers: Record<string, string>; body: string };

function parseMessage(
  buffer: Buffer,
  mailFrom: { address: string } | false,
  rcptTo: Array<{ address: string }>,
): CapturedMessage {
  // latin1 keeps one char per byte, so decoding of 8bit parts can happen per charset later.
  // The CRLF before the SMTP end-of-data dot is not part of a single-part body.
  const root = splitEntity(buffer.toString('latin1').replace(/\r?\n$/, ''));
  const parts = { text: '', html: '' };
  collectText(root, parts);
  const headers = Object.fromEntries(
    Object.entries(root.headers).map(([name, value]) => [name, decodeWords(value)]),
  );
  return {
    from: mailFrom ? mailFrom.address : '',
    to: rcptTo.map((r) => r.address),
    subject: headers.subject ?? '',
    text: parts.text,
    html: parts.html,
    headers,
    raw: buffer.toString('utf8'),
    receivedAt: Date.now(),
  };
}

function splitEntity(source: string): Entity {
  const match = /\r?\n\r?\n/.exec(source);
  const head = match ? source.slice(0, match.index) : source;
  const body = match ? source.slice(match.index + match[0].length) : '';
  const headers: Record<string, string> = {};
  for (const line of head.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    headers[name] ??= line.slice(colon + 1).trim();
  }
  return { headers, body };
}

function headerParam(value: string, name: string): string | undefined {
  const match = new RegExp(`;\\s*${name}\\s*=\\s*(?:"([^"]*)"|([^;\\s]+))`, 'i').exec(value);
  return match?.[1] ?? match?.[2];
}

function collectText(entity: Entity, out: { text: string; html: string }): void {
  const contentType = entity.headers['content-type'] ?? 'text/plain';
  const type = (contentType.split(';')[0] ?? '').trim().toLowerCase();
  if (type.startsWith('multipart/')) {
    const boundary = headerParam(contentType, 'boundary');
    if (!boundary) return;
    const sections = entity.body.split(
      new RegExp(`\\r?\\n?--${escapeRegExp(boundary)}(?:--)?[ \\t]*\\r?\\n?`),
    );
    // The first section is the preamble and the last the epilogue.
    for (const section of sections.slice(1, -1)) collectText(splitEntity(section), out);
    return;
  }
  if (/^attachment/i.test(entity.headers['content-disposition'] ?? '')) return;
  if (type !== 'text/plain' && type !== 'text/html') return;
  const decoded = decodeBody(
    entity.body,
    entity.headers['content-transfer-encoding'],
    headerParam(contentType, 'charset'),
  );
  if (type === 'text/plain' && out.text === '') out.text = decoded;
  if (type === 'text/html' && out.html === '') out.html = decoded;
}

function decodeBody(body: string, encoding = '7bit', charset = 'utf-8'): string {
  let bytes: Buffer;
  const kind = encoding.trim().toLowerCase();
  if (kind === 'base64') bytes = Buffer.from(body.replace(/\s+/g, ''), 'base64');
  else if (kind === 'quoted-printable') bytes = decodeQuotedPrintable(body);
  else bytes = Buffer.from(body, 'latin1');
  return decodeCharset(bytes, charset).replace(/\r\n/g, '\n');
}

function decodeQuotedPrintable(body: string): Buffer {
  const unwrapped = body.replace(/[ \t]+(?=\r?\n)/g, '').replace(/=\r?\n/g, '');
  return Buffer.from(
    unwrapped.replace(/=([0-9A-Fa-f]{2})/g, (_, hex: string) =>
      String.fromCharCode(Number.parseInt(hex, 16)),
    ),
    'latin1',
  );
}

function decodeCharset(bytes: Buffer, charset: string): string {
  try {
    return new TextDecoder(charset).decode(bytes);
  } catch {
    return bytes.toString('utf8');
  }
}

/**
 * Resolves RFC 2047 encoded words (`=?UTF-8?Q?...?=`, `=?UTF-8?B?...?=`) as nodemailer
 * writes them. Adjacent words are joined as bytes first, since a multi-byte
 * character may be split across two words.
 */
function decodeWords(value: string): string {
  const word = /=\?([^?]+)\?([BbQq])\?([^?]*)\?=/g;
  let out = '';
  let last = 0;
  let pending: { charset: string; bytes: Buffer[] } | undefined;
  const flush = () => {
    if (pending) out += decodeCharset(Buffer.concat(pending.bytes), pending.charset);
    pending = undefined;
  };
  for (const match of value.matchAll(word)) {
    const [whole, charset = 'utf-8', mode = 'Q', text = ''] = match;
    const between = value.slice(last, match.index);
    const bytes =
      mode.toUpperCase() === 'B'
        ? Buffer.from(text, 'base64')
        : decodeQuotedPrintable(text.replace(/_/g, ' '));
    if (pending && /^\s*$/.test(between) && pending.charset.toLowerCase() === charset.toLowerCase()) {
      pending.bytes.push(bytes);
    } else {
      flush();
      out += between;
      pending = { charset, bytes: [bytes] };
    }
    last = match.index + whole.length;
  }
  flush();
  return out + value.slice(last);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
