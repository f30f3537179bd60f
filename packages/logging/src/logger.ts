import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import { currentRequestId } from './context';
import { createLineWriter } from './line-writer';
import { redactLine } from './redact';

export type { Logger } from 'pino';

export type CreateLoggerOptions = {
  service: string;
  level?: string;
  /**
   * Where lines go. Default: stdout through an asynchronous line writer
   * (./line-writer), so a request never waits on a write(2) to stdout. Lines
   * are collected up to 4 KiB (or 100 ms, whichever comes first) and written
   * together: under load one write per ~15 access-log lines instead of one per
   * line (bench `peers` profile: ~4 % of the gateway's CPU was the per-line
   * fs.write). No write is larger than 4 KiB or ends mid-line, so cluster
   * workers sharing one stdout pipe never interleave inside a line. What is
   * buffered is flushed synchronously when the process exits. Tests pass a
   * capturing stream.
   */
  destination?: DestinationStream;
};

/**
 * A pino logger whose every line carries the service name, the process id (which
 * cluster worker wrote it), the request id in scope, and no secrets.
 */
export function createLogger(opts: CreateLoggerOptions): Logger {
  const options: LoggerOptions = {
    level: opts.level ?? 'info',
    base: { service: opts.service, pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    mixin() {
      const requestId = currentRequestId();
      return requestId ? { request_id: requestId } : {};
    },
    hooks: { streamWrite: redactLine },
  };
  return pino(options, opts.destination ?? createLineWriter({ fd: 1 }));
}

/** A destination that keeps every line in memory, for tests that read the logs. */
export function createMemoryDestination(): DestinationStream & { lines: string[]; text(): string } {
  const lines: string[] = [];
  return {
    lines,
    write(chunk: string) {
      lines.push(chunk);
    },
    text() {
      return lines.join('');
    },
  };
}
