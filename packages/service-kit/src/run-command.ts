/**
 * Runs a one-shot command (a CronJob or a script): the number `main` resolves to becomes the exit
 * code; if it throws, `crashLine(err)` goes to stderr and the exit code is 3.
 */
export function runCommand(main: () => Promise<number>, crashLine: (err: unknown) => string): void {
  main().then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`${crashLine(err)}\n`);
      process.exitCode = 3;
    },
  );
}
