import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** A loopback server started by one of the fakes. */
export type LoopbackServer = {
  /** Base URL without a trailing slash, e.g. `http://127.0.0.1:41234`. */
  url: string;
  port: number;
  /** Stops listening and destroys every open socket, so hung requests do not keep Jest alive. */
  close(): Promise<void>;
};

export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

/**
 * Listens on 127.0.0.1 with an OS-assigned port. Sockets are tracked because
 * `server.close()` alone waits for keep-alive and hung connections forever.
 */
export async function listenLoopback(handler: RequestHandler): Promise<LoopbackServer & { server: Server }> {
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    Promise.resolve(handler(req, res)).catch((err: unknown) => {
      // A bug in a fake must surface as a readable failure, never as a hung test.
      if (!res.headersSent) {
        sendJson(res, 500, { error: { message: `fake crashed: ${String(err)}`, type: 'fake_error' } });
      } else {
        res.destroy();
      }
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // A deep accept queue: bench opens thousands of streams at once; the default (511) drops SYNs.
    server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('loopback server has no port');
  let closing: Promise<void> | undefined;
  return {
    server,
    port: address.port,
    url: `http://127.0.0.1:${address.port}`,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
      return closing;
    },
  };
}

/** Reads the whole request body; fakes only see small test payloads. */
export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const payload = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(payload),
    ...headers,
  });
  res.end(payload);
}

/**
 * Waits `ms`, resolving early (with false) when the client goes away, so a fake
 * never writes to a closed socket. The timer is unref'd for Jest.
 */
export function waitUnlessClosed(res: ServerResponse, ms: number): Promise<boolean> {
  if (ms <= 0) return Promise.resolve(!res.destroyed);
  return new Promise((resolve) => {
    const onClose = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      res.off('close', onClose);
      resolve(!res.destroyed);
    }, ms);
    timer.unref();
    res.once('close', onClose);
  });
}

/** Lower-cased header map with multi-valued headers joined, for request logs. */
export function flattenHeaders(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}
