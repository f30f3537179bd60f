/**
 * Runs a service's `main`. A failure before it serves (bad config, database
 * unreachable) prints one line naming the service and exits 1, without a stack.
 */
export function startService(service: string, main: () => Promise<void>): void {
  main().catch((err: unknown) => {
    process.stderr.write(
      `${service}: failed to start: ${err instanceof Error ? err.message : String(err)}\n`,
    );
    process.exit(1);
  });
}
