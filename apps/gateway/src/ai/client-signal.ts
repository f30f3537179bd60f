import type { Response } from 'express';

/**
 * A signal that fires when the client goes away before the response was
 * finished. `res` is watched rather than `req`: Node emits `close` on the
 * request as soon as its body has been read, which is long before the answer.
 */
export function clientAbortSignal(res: Response): AbortSignal {
  const controller = new AbortController();
  if (res.destroyed) {
    controller.abort();
    return controller.signal;
  }
  res.once('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  return controller.signal;
}
