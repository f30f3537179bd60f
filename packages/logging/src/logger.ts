import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import { currentRequestId } from './context';
import { redactLine } from './redact';

export type { Logger } from 'pino';

export type CreateLoggerOptions = {
  service: string;
  level?: string;
  /**
   * Where lines go. Default: stdout through an asynchronous sonic-boom, so a
   * request never waits on a write(2) to stdout. Lines are collected up to
   * 4 KiB (or 100 ms, whichever comes first) and written together: under load
   * one write per ~15 access-log lines instead of one per line (bench `peers`
   * profile: ~4 % of the gateway's CPU was sonic-boom's per-line fs.write).
   * What is buffered is flushed synchronously when the process exits. Tests
   * pass a capturing stream.
   */
  destination?: DestinationStream;
};

/** A pino logger whose every line carries the service name, the request id in scope, and no secrets. */
export function createLogger(opts: CreateLoggerOptions): Logger {
  const options: LoggerOptions = {
    level: opts.level ?? 'info',
    base: { service: opts.service },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    mixin() {
      const requestId = currentRequestId();
      return requestId ? { request_id: requestId } : {};
    },
    hooks: { streamWrite: redactLine },
  };
  return pino(
    options,
    opts.destination ?? pino.destination({ dest: 1, sync: false, minLength: 4096, periodicFlush: 100 }),
  );
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
