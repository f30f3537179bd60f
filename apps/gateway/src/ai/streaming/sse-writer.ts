import type { Response } from 'express';

/** Server-sent events on an Express response, with keep-alive comments and backpressure. */
export type SseWriter = {
  /**
   * Writes one event. Returns a promise only when the socket's buffer is full
   * (it resolves once the socket can take more, or is gone); otherwise nothing,
   * so the common case costs no promise per chunk.
   */
  send(event: string, data: unknown): Promise<void> | undefined;
  /** Writes one unnamed event (`data:` only, as OpenAI streams); a string is sent as is, anything else as JSON. */
  sendData(data: unknown): Promise<void> | undefined;
  end(): void;
};

/** Resolves on 'drain', or when the connection closes so a dead client never hangs us. */
function waitForDrain(res: Response): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.once('drain', done);
    res.once('close', done);
  });
}

/**
 * Sends the 200 and the SSE headers, then keeps the connection warm with a
 * comment every `keepAliveMs` so proxies do not cut a slow stream.
 */
export function openSse(res: Response, opts: { keepAliveMs: number }): SseWriter {
  res.status(200);
  res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
  res.setHeader('Cache-Control', 'no-cache, no-transform');
  res.setHeader('Connection', 'keep-alive');
  // nginx would otherwise buffer the stream and deliver it in one piece.
  res.setHeader('X-Accel-Buffering', 'no');
  res.flushHeaders();
  const keepAlive = setInterval(() => {
    if (!res.writableEnded && !res.destroyed) res.write(': keep-alive\n\n');
  }, opts.keepAliveMs);
  keepAlive.unref();
  res.once('close', () => clearInterval(keepAlive));
  const write = (text: string): Promise<void> | undefined => {
    if (res.writableEnded || res.destroyed) return undefined;
    return res.write(text) ? undefined : waitForDrain(res);
  };
  return {
    send: (event, data) => write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`),
    sendData: (data) => write(`data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`),
    end() {
      clearInterval(keepAlive);
      if (!res.writableEnded) res.end();
    },
  };
}
