import http, { type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import https from 'node:https';

/** One request sent to the proxy on 127.0.0.1, as a client somewhere would send it. */
export type ProxyRequest = {
  /** Host header: picks the service (e.g. payment.localhost). */
  host: string;
  path: string;
  method?: string;
  headers?: Record<string, string>;
  /** JSON-encoded unless it is a string or Buffer already. */
  body?: unknown;
  /** Source address of the connection (127.0.0.x): what nginx sees as the client. */
  localAddress?: string;
};

/**
 * Where the proxy listens: a bare port is plain HTTP; with `ca` the request
 * goes over TLS, trusting only that CA and checking the certificate against
 * the Host header's name (sent as SNI), as a browser would.
 */
export type ProxyTarget = number | { port: number; ca?: Buffer };

export type ProxyResponse = { status: number; headers: IncomingHttpHeaders; text: string; json: unknown };

function send(
  target: ProxyTarget,
  req: ProxyRequest,
): { request: http.ClientRequest; response: Promise<IncomingMessage> } {
  const payload =
    req.body === undefined
      ? undefined
      : typeof req.body === 'string' || Buffer.isBuffer(req.body)
        ? req.body
        : JSON.stringify(req.body);
  const headers: Record<string, string> = { host: req.host, ...req.headers };
  if (payload !== undefined) {
    headers['content-type'] ??= 'application/json';
    headers['content-length'] = String(Buffer.byteLength(payload));
  }
  const { port, ca } = typeof target === 'number' ? { port: target, ca: undefined } : target;
  const options = {
    host: '127.0.0.1',
    port,
    method: req.method ?? (payload === undefined ? 'GET' : 'POST'),
    path: req.path,
    headers,
    localAddress: req.localAddress,
    // A fresh connection per request: no pooled socket outlives the test.
    agent: false,
  } as const;
  const request = ca
    ? https.request({ ...options, ca, servername: req.host.replace(/:\d+$/, '') })
    : http.request(options);
  const response = new Promise<IncomingMessage>((resolve, reject) => {
    request.once('response', resolve);
    request.on('error', reject);
  });
  request.end(payload);
  return { request, response };
}

/** Sends a request through the proxy and reads the whole answer. */
export async function proxyRequest(target: ProxyTarget, req: ProxyRequest): Promise<ProxyResponse> {
  const res = await send(target, req).response;
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.statusCode ?? 0, headers: res.headers, text, json };
}

/** One server-sent event. */
export type SseEvent = { event: string; data: unknown };

/** A response read event by event, as a browser's EventSource would. */
export type SseStream = {
  status: number;
  headers: IncomingHttpHeaders;
  /** The next event, or undefined once the stream ended. Keep-alive comments are skipped. */
  next(): Promise<SseEvent | undefined>;
  close(): void;
};

function parseEvent(block: string): SseEvent | undefined {
  let event = 'message';
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith('event:')) event = line.slice(6).trim();
    else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
  }
  if (data.length === 0) return undefined;
  const text = data.join('\n');
  try {
    return { event, data: JSON.parse(text) };
  } catch {
    return { event, data: text };
  }
}

/** Opens a streaming request through the proxy; events are handed out as their bytes arrive. */
export async function openSse(target: ProxyTarget, req: ProxyRequest): Promise<SseStream> {
  const { request, response } = send(target, req);
  const res = await response;
  res.setEncoding('utf8');
  const events: SseEvent[] = [];
  const waiters: Array<(event: SseEvent | undefined) => void> = [];
  let buffer = '';
  let ended = false;
  const push = (event: SseEvent | undefined) => {
    const waiter = waiters.shift();
    if (waiter) waiter(event);
    else if (event) events.push(event);
  };
  res.on('data', (chunk: string) => {
    buffer += chunk.replaceAll('\r\n', '\n');
    let boundary = buffer.indexOf('\n\n');
    while (boundary !== -1) {
      const event = parseEvent(buffer.slice(0, boundary));
      buffer = buffer.slice(boundary + 2);
      if (event) push(event);
      boundary = buffer.indexOf('\n\n');
    }
  });
  const finish = () => {
    ended = true;
    while (waiters.length > 0) waiters.shift()?.(undefined);
  };
  res.once('end', finish);
  res.once('close', finish);
  return {
    status: res.statusCode ?? 0,
    headers: res.headers,
    next() {
      const queued = events.shift();
      if (queued || ended) return Promise.resolve(queued);
      return new Promise((resolve) => waiters.push(resolve));
    },
    close() {
      request.destroy();
    },
  };
}
