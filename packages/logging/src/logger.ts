import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import { currentRequestId } from './context';
import { redactLine } from './redact';

export type { Logger } from 'pino';

export type CreateLoggerOptions = {
  service: string;
  level?: string;
  /** Where lines go; stdout by default. Tests pass a capturing stream. */
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
  return opts.destination ? pino(options, opts.destination) : pino(options);
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
