import { spawn } from 'node:child_process';
import path from 'node:path';

/** A payment service process started through src/main.ts, as the image runs dist/main.js. */
export type PaymentProcess = {
  output(): string;
  /** Sends `signal` and resolves with the exit code (null when killed by the signal). */
  signal(signal: NodeJS.Signals): Promise<number | null>;
};

/** Starts `node --import tsx src/main.ts` with exactly `env` (plus PATH) and waits for its "listening" line. */
export async function startPaymentProcess(env: Record<string, string>): Promise<PaymentProcess> {
  const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', 'src/main.ts'], {
    cwd: path.join(__dirname, '..', '..'),
    env: { PATH: process.env.PATH ?? '', WORKERS: '1', HOST: '127.0.0.1', PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`payment did not start in 60 s:\n${output.slice(-3000)}`));
    }, 60_000);
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      if (output.includes('"msg":"listening"')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`payment exited with ${code} before listening:\n${output.slice(-3000)}`));
    });
  });
  return {
    output: () => output,
    async signal(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}
