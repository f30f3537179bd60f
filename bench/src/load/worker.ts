import { generateLoad } from './generate';
import type { LoadSpec, WorkerMessage } from './types';

// The load-generator child: receives one LoadSpec, runs it, reports and exits,
// so the generator never competes with the service for the service's event loop.
function send(message: WorkerMessage): void {
  process.send?.(message);
}

process.once('message', (spec: LoadSpec) => {
  generateLoad(spec, () => send({ type: 'measure-start' }))
    .then((result) => send({ type: 'result', result }))
    .catch((err: unknown) =>
      send({ type: 'failed', message: err instanceof Error ? err.message : String(err) }),
    )
    .finally(() => process.disconnect());
});
