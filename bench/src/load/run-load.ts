import { fork } from 'node:child_process';
import path from 'node:path';
import { generateLoad } from './generate';
import type { LoadResult, LoadSpec, WorkerMessage } from './types';

/**
 * Where autocannon runs: `child` (default) is a forked Node process with its own
 * event loop; `inproc` shares the service's event loop and is kept only to
 * show, with numbers, why the child is the default (see README).
 */
export type LoadGeneratorMode = 'child' | 'inproc';

function runInChild(spec: LoadSpec, onMeasureStart: () => void): Promise<LoadResult> {
  // fork() inherits process.execArgv, i.e. tsx's loader and --conditions=source.
  const child = fork(path.join(__dirname, 'worker.ts'), [], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    let settled = false;
    child.on('message', (message: WorkerMessage) => {
      if (message.type === 'measure-start') onMeasureStart();
      else if (message.type === 'result') {
        settled = true;
        resolve(message.result);
      } else {
        settled = true;
        reject(new Error(`load generator failed: ${message.message}`));
      }
    });
    child.on('error', (err) => {
      if (!settled) reject(err);
      settled = true;
    });
    child.on('exit', (code, signal) => {
      if (!settled)
        reject(new Error(`load generator exited (code ${code}, signal ${signal}) without a result`));
      settled = true;
    });
    child.send(spec);
  });
}

export function runLoad(
  spec: LoadSpec,
  mode: LoadGeneratorMode,
  onMeasureStart: () => void,
): Promise<LoadResult> {
  return mode === 'child' ? runInChild(spec, onMeasureStart) : generateLoad(spec, onMeasureStart);
}
