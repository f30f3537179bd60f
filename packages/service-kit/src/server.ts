import cluster from 'node:cluster';
import { randomUUID } from 'node:crypto';
import { createServer, type Server, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
// The codes alone: the cluster primary loads this file, and the package's index brings zod and Express types.
import { ERROR_CODES, type ErrorCode } from '@platform/errors/codes';
import type { Logger } from '@platform/logging';
import type { Express } from 'express';
import { growthSetByOperator, HEAP_SURGE_DEFAULTS, type HeapSurgeOptions, heapSurge } from './heap-surge';

export type RunServerOptions = {
  app: Express;
  port: number;
  host: string;
  logger: Logger;
  /** Closes clients (Prisma, Redis, ...) after the last request finished. */
  onClose: () => Promise<void>;
  /** How long in-flight requests (and streams) may run after SIGTERM. */
  drainMs?: number;
  /** Called when the drain deadline passes, e.g. to abort outgoing calls (a Stripe client's signal). */
  onDrainDeadline?: () => void;
  /**
   * V8's heap growth held low while many requests are open (./heap-surge);
   * HEAP_SURGE_DEFAULTS unless given, off with `false` or when the node flags
   * set `--heap-growing-percent` themselves.
   */
  heapSurge?: Omit<HeapSurgeOptions, 'onChange' | 'onCompact'> | false;
};

/**
 * Emitted on every response still open when the drain deadline passes. A
 * long-lived response (a server-sent event stream) listens for it, writes its
 * last event (an error saying the service is going away) and ends; a request
 * still waiting for an upstream aborts that call (the gateway's client signal).
 * A response whose headers are still unsent after the event is answered 503
 * `service unavailable` with Retry-After; anything still open a moment later
 * is cut.
 */
export const DRAIN_DEADLINE_EVENT = 'drain-deadline';

/** Time between the deadline event and cutting the remaining connections. */
const FINAL_WORDS_MS = 1000;

/** How long in-flight requests may run after SIGTERM unless `drainMs` says otherwise. */
export const DEFAULT_DRAIN_MS = 10_000;

/**
 * How long a cluster primary waits for its workers to stop after SIGTERM before
 * killing them (and exiting 1): the drain, the final words, and time to close
 * the clients (buffered usage rows are written then).
 */
export const STOP_DEADLINE_MS = DEFAULT_DRAIN_MS + FINAL_WORDS_MS + 4000;

/** The message a cluster primary sends a worker in place of the signal it got (see ./cluster). */
export const SHUTDOWN_MESSAGE = 'platform:shutdown';

export type GracefulShutdownOptions = {
  logger: Logger;
  onClose: () => Promise<void>;
  drainMs?: number;
  /** Called when the drain deadline passes, before the open responses are told. */
  onDrainDeadline?: () => void;
  /** Ends the process; tests pass a spy. */
  exit?: (code: number) => void;
  /** Told the number of open requests each time one opens or closes (./heap-surge). */
  onOpenCount?: (open: number) => void;
};

/** Seconds a client should wait before retrying a request the drain deadline cut short (another instance serves it). */
export const DRAIN_RETRY_AFTER_SECONDS = 1;

/** 503 `service unavailable` for a request still waiting (for a provider, for Stripe) at the drain deadline. */
function answerUnavailable(res: ServerResponse): void {
  const locals = (res as ServerResponse & { locals?: { requestId?: unknown } }).locals;
  const requestId = typeof locals?.requestId === 'string' ? locals.requestId : randomUUID();
  const { error } = ERROR_CODES.service_unavailable;
  const body = JSON.stringify({ error, code: 'service_unavailable', request_id: requestId });
  res.writeHead(503, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'retry-after': String(DRAIN_RETRY_AFTER_SECONDS),
    'x-request-id': requestId,
    connection: 'close',
  });
  res.end(body);
}

/**
 * Returns the shutdown routine of `server`: stop accepting, let in-flight
 * requests finish, at `drainMs` tell open streams to end (DRAIN_DEADLINE_EVENT),
 * answer requests without a response yet 503 with Retry-After, and cut whatever
 * is left a moment later, then close the clients and exit 0.
 */
export function createGracefulShutdown(
  server: Server,
  opts: GracefulShutdownOptions,
): (signal: string) => void {
  const open = new Set<ServerResponse>();
  server.on('request', (_req, res: ServerResponse) => {
    open.add(res);
    opts.onOpenCount?.(open.size);
    res.once('close', () => {
      open.delete(res);
      opts.onOpenCount?.(open.size);
    });
  });
  const exit = opts.exit ?? ((code: number) => process.exit(code));
  let closing = false;
  return (signal) => {
    if (closing) return;
    closing = true;
    opts.logger.info({ signal }, 'shutting down');
    const deadline = setTimeout(() => {
      opts.logger.warn({ open: open.size }, 'drain deadline passed; ending streams and closing connections');
      try {
        opts.onDrainDeadline?.();
      } catch (err) {
        opts.logger.error({ err }, 'onDrainDeadline failed');
      }
      for (const res of open) {
        res.emit(DRAIN_DEADLINE_EVENT);
        if (!res.headersSent && !res.writableEnded) answerUnavailable(res);
      }
      const cut = setTimeout(() => server.closeAllConnections(), FINAL_WORDS_MS);
      cut.unref();
      server.closeIdleConnections();
    }, opts.drainMs ?? DEFAULT_DRAIN_MS);
    deadline.unref();
    server.close(() => {
      clearTimeout(deadline);
      void opts
        .onClose()
        .catch((err: unknown) => opts.logger.error({ err }, 'error while closing clients'))
        .finally(() => {
          opts.logger.info('stopped');
          opts.logger.flush?.();
          exit(0);
        });
    });
    server.closeIdleConnections();
    // Keep-alive sockets that finish their last request while draining are closed as they go idle.
    server.on('request', (_req, res: ServerResponse) =>
      res.once('finish', () => server.closeIdleConnections()),
    );
  };
}

/** The answers to requests Node's parser refuses before any route runs (`clientError`). */
const CLIENT_ERRORS: Record<string, ErrorCode> = {
  // Request line and headers over Node's 16 kB maxHeaderSize.
  HPE_HEADER_OVERFLOW: 'header_fields_too_large',
  // headersTimeout / requestTimeout passed before the request was complete.
  ERR_HTTP_REQUEST_TIMEOUT: 'request_timeout',
};

/**
 * Answers what Node's HTTP parser refuses (control bytes in a header value, a
 * malformed request line, request line and headers over 16 kB, a request that
 * did not arrive in time) with the JSON error contract and a fresh request id,
 * instead of Node's bare status line, then closes the connection: the parser
 * cannot resume after such an error. A socket already reset, or one whose
 * response has begun, is just destroyed.
 */
export function answerClientError(err: Error & { code?: string }, socket: Duplex): void {
  const pending = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (err.code === 'ECONNRESET' || !socket.writable || pending?.headersSent) {
    socket.destroy();
    return;
  }
  const code = CLIENT_ERRORS[err.code ?? ''] ?? 'bad_request';
  const { status, error } = ERROR_CODES[code];
  const requestId = randomUUID();
  const body = JSON.stringify({ error, code, request_id: requestId });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      `X-Request-Id: ${requestId}\r\n` +
      'Connection: close\r\n\r\n' +
      body,
  );
}

/**
 * Connections the kernel may hold before we accept them. Node's default (511)
 * overflows when a burst of clients connects at once (e.g. 2,000 streams
 * opening together in bench `streams`): the dropped SYNs are retried after 1 s,
 * then 3 s, which showed as a 1-3 s time to first byte. Linux caps this at
 * net.core.somaxconn (4096 by default).
 */
export const LISTEN_BACKLOG = 4096;

/** The heap-growth governor runServer installs, or undefined where it is off. */
function heapSurgeOf(opts: RunServerOptions) {
  if (opts.heapSurge === false || growthSetByOperator()) return undefined;
  return heapSurge({
    ...(opts.heapSurge ?? HEAP_SURGE_DEFAULTS),
    onChange: (surging, open) =>
      opts.logger.info(
        { open },
        surging
          ? 'many requests open: heap growth held low'
          : 'requests back down: heap growth back to V8 after its next full collection',
      ),
    onCompact: ({ ms, rssBefore, rssAfter }) =>
      opts.logger.info(
        {
          ms: Math.round(ms),
          rss_before_mb: Math.round(rssBefore / 1048576),
          rss_after_mb: Math.round(rssAfter / 1048576),
        },
        'surge over: heap compacted and its empty pages returned',
      ),
  });
}

/**
 * Listens, and on SIGTERM/SIGINT stops accepting, lets in-flight requests finish
 * up to a deadline, closes the clients and exits 0. In a cluster worker the
 * connections come from the primary (Node's round-robin; the backlog is passed
 * on to the primary's listening socket), and the primary's shutdown message
 * starts the same routine.
 */
export async function runServer(opts: RunServerOptions): Promise<Server> {
  const server = createServer(opts.app);
  server.on('clientError', answerClientError);
  server.listen({ port: opts.port, host: opts.host, backlog: LISTEN_BACKLOG });
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  // Node's defaults cut idle keep-alive sockets before a proxy's would; keep them longer.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  const address = server.address();
  opts.logger.info({ address }, 'listening');
  const shutdown = createGracefulShutdown(server, { ...opts, onOpenCount: heapSurgeOf(opts)?.update });
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
  if (cluster.isWorker) {
    process.on('message', (message: { type?: unknown; signal?: unknown }) => {
      if (message?.type === SHUTDOWN_MESSAGE) shutdown(String(message.signal));
    });
  }
  return server;
}
