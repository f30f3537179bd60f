import { DRAIN_DEADLINE_EVENT } from '@platform/service-kit';
import type { Response } from 'express';

/**
 * A signal that fires when the client goes away before the response was
 * finished. `res` is watched rather than `req`: Node emits `close` on the
 * request as soon as its body has been read, which is long before the answer.
 * It also fires at the server's drain deadline (shutdown) while nothing has been
 * sent yet: runServer answers that request 503 itself, so the provider call is
 * aborted like a client's that left. A started stream ends on its own listener.
 */
export function clientAbortSignal(res: Response): AbortSignal {
  const controller = new AbortController();
  if (res.destroyed) {
    controller.abort();
    return controller.signal;
  }
  const onDrainDeadline = () => {
    if (!res.headersSent) controller.abort();
  };
  res.once(DRAIN_DEADLINE_EVENT, onDrainDeadline);
  res.once('close', () => {
    res.off(DRAIN_DEADLINE_EVENT, onDrainDeadline);
    if (!res.writableFinished) controller.abort();
  });
  return controller.signal;
}
