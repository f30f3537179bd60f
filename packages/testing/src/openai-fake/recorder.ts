import type { IncomingMessage, ServerResponse } from 'node:http';
import { flattenHeaders } from '../http-server';

/** One request a provider fake received, and what became of it. */
export type RecordedRequest = {
  /** 1-based arrival order. */
  seq: number;
  method: string;
  path: string;
  /** Lower-cased headers, e.g. `authorization`, `xi-api-key`. */
  headers: Record<string, string>;
  /** Parsed JSON body, or undefined when the body was empty or not JSON. */
  body: unknown;
  /** The body's bytes as received (UTF-8), where a fake keeps them (the Anthropic fake does). */
  rawBody?: string;
  /** The response bytes the fake wrote, where it keeps them (the Anthropic fake's messages and events). */
  sent?: string;
  /** `model` from the body (or the voice id for ElevenLabs text-to-speech), when present. */
  model?: string;
  receivedAt: number;
  /** Status the fake sent, once headers went out. */
  status?: number;
  /** True once the fake finished the response normally. */
  completed: boolean;
  /** True when the client closed the connection before the response ended (abort or timeout). */
  aborted: boolean;
  abortedAt?: number;
  /** True when the fake cut the connection on purpose (failAfterChunks). */
  destroyedByFake: boolean;
};

type Waiter = { predicate: (r: RecordedRequest) => boolean; resolve: (r: RecordedRequest) => void };

/** Keeps the request log and lets tests wait for a request or an abort without polling. */
export type Recorder = {
  requests: RecordedRequest[];
  start(req: IncomingMessage, res: ServerResponse, body: unknown, model: string | undefined): RecordedRequest;
  waitForRequest(predicate?: (r: RecordedRequest) => boolean, timeoutMs?: number): Promise<RecordedRequest>;
  waitForAbort(predicate?: (r: RecordedRequest) => boolean, timeoutMs?: number): Promise<RecordedRequest>;
  /** Set while the fake itself shuts down, so its own socket teardown is not logged as client aborts. */
  closing: boolean;
};

export function createRecorder(): Recorder {
  const requests: RecordedRequest[] = [];
  const requestWaiters: Waiter[] = [];
  const abortWaiters: Waiter[] = [];

  const notify = (waiters: Waiter[], record: RecordedRequest) => {
    for (const waiter of [...waiters]) {
      if (waiter.predicate(record)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(record);
      }
    }
  };

  const wait = (
    waiters: Waiter[],
    existing: (r: RecordedRequest) => boolean,
    predicate: (r: RecordedRequest) => boolean,
    timeoutMs: number,
    what: string,
  ) => {
    const found = requests.find((r) => existing(r) && predicate(r));
    if (found) return Promise.resolve(found);
    return new Promise<RecordedRequest>((resolve, reject) => {
      const waiter: Waiter = {
        predicate: (r) => existing(r) && predicate(r),
        resolve: (r) => {
          clearTimeout(timer);
          resolve(r);
        },
      };
      const timer = setTimeout(() => {
        waiters.splice(waiters.indexOf(waiter), 1);
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
      }, timeoutMs);
      timer.unref();
      waiters.push(waiter);
    });
  };

  const recorder: Recorder = {
    requests,
    closing: false,
    start(req, res, body, model) {
      const record: RecordedRequest = {
        seq: requests.length + 1,
        method: req.method ?? 'GET',
        path: new URL(req.url ?? '/', 'http://127.0.0.1').pathname,
        headers: flattenHeaders(req),
        body,
        ...(model !== undefined ? { model } : {}),
        receivedAt: Date.now(),
        completed: false,
        aborted: false,
        destroyedByFake: false,
      };
      requests.push(record);
      res.on('finish', () => {
        record.completed = true;
      });
      res.on('close', () => {
        if (record.completed || record.destroyedByFake || recorder.closing) return;
        record.aborted = true;
        record.abortedAt = Date.now();
        notify(abortWaiters, record);
      });
      notify(requestWaiters, record);
      return record;
    },
    waitForRequest: (predicate = () => true, timeoutMs = 5000) =>
      wait(requestWaiters, () => true, predicate, timeoutMs, 'a request'),
    waitForAbort: (predicate = () => true, timeoutMs = 5000) =>
      wait(abortWaiters, (r) => r.aborted, predicate, timeoutMs, 'a client abort'),
  };
  return recorder;
}
