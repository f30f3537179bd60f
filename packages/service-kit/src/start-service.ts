import cluster from 'node:cluster';

/** What a cluster worker sends its primary instead of printing its start failure (see ./cluster). */
export const START_FAILED = 'platform:start-failed';
export type StartFailedMessage = { type: typeof START_FAILED; line: string };

/** The one line a failed start prints: `<service>: failed to start: <reason>` (env errors as they are). */
export function startFailureLine(service: string, err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  // loadEnvOrExit's error already says what is wrong ("invalid environment: ..."); checked by name
  // so this module stays free of zod (the cluster primary imports it).
  if (err instanceof Error && err.name === 'EnvError') return `${service}: ${message}`;
  return `${service}: failed to start: ${message}`;
}

/**
 * Runs a service's `main`. A failure before it serves (bad config, database
 * unreachable) prints one line naming the service and exits 1, without a stack.
 * In a cluster worker the line goes to the primary, which prints it once for
 * all workers (or logs it when a replacement worker fails).
 */
export function startService(service: string, main: () => Promise<void>): void {
  main().catch((err: unknown) => {
    const line = startFailureLine(service, err);
    if (cluster.isWorker && process.send) {
      const message: StartFailedMessage = { type: START_FAILED, line };
      process.send(message, undefined, undefined, () => process.exit(1));
      // The primary may be gone; do not wait for the callback forever.
      setTimeout(() => process.exit(1), 2000);
      return;
    }
    process.stderr.write(`${line}\n`);
    process.exit(1);
  });
}
