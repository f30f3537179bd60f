import { createServer, type Server } from 'node:http';
import type { Logger } from '@platform/logging';
import type { Express } from 'express';

export type RunServerOptions = {
  app: Express;
  port: number;
  host: string;
  logger: Logger;
  /** Closes clients (Prisma, Redis, ...) after the last request finished. */
  onClose: () => Promise<void>;
  /** How long in-flight requests (and streams) may run after SIGTERM. */
  drainMs?: number;
};

/**
 * Listens, and on SIGTERM/SIGINT stops accepting, lets in-flight requests finish
 * up to a deadline, closes the clients and exits 0.
 */
/**
 * Connections the kernel may hold before we accept them. Node's default (511)
 * overflows when a burst of clients connects at once (e.g. 2,000 streams
 * opening together in bench `streams`): the dropped SYNs are retried after 1 s,
 * then 3 s, which showed as a 1-3 s time to first byte. Linux caps this at
 * net.core.somaxconn (4096 by default).
 */
export const LISTEN_BACKLOG = 4096;

export async function runServer(opts: RunServerOptions): Promise<Server> {
  const server = createServer(opts.app);
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

  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    opts.logger.info({ signal }, 'shutting down');
    const deadline = setTimeout(() => {
      opts.logger.warn('drain deadline passed; closing remaining connections');
      server.closeAllConnections();
    }, opts.drainMs ?? 10_000);
    deadline.unref();
    server.close(() => {
      void opts
        .onClose()
        .catch((err: unknown) => opts.logger.error({ err }, 'error while closing clients'))
        .finally(() => {
          opts.logger.info('stopped');
          opts.logger.flush?.();
          process.exit(0);
        });
    });
    server.closeIdleConnections();
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
  return server;
}
