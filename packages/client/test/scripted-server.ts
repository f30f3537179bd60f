import type { IncomingMessage, ServerResponse } from 'node:http';
import { flattenHeaders, listenLoopback, readBody, sendJson } from '@platform/testing';

/** What the server does with one request, in order of arrival. */
export type Step =
  | { status: number; body?: unknown; headers?: Record<string, string>; raw?: string }
  /** Destroys the socket without answering: the client sees a network error. */
  | { drop: true }
  /** Answers with a custom handler (streams, hangs). */
  | { handle: (req: IncomingMessage, res: ServerResponse) => void | Promise<void> };

export type RecordedRequest = {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  /** `Date.now()` at arrival; under fake timers it is the fake clock. */
  at: number;
};

export type ScriptedServer = {
  url: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
};

const REQUEST_ID = /^[0-9a-f-]{36}$/i;

/**
 * A loopback server that answers each request with the next step of a script,
 * echoing the client's x-request-id like the real services do, so every answer
 * carries a request id the test can predict.
 */
export async function startScriptedServer(steps: Step[]): Promise<ScriptedServer> {
  const requests: RecordedRequest[] = [];
  const queue = [...steps];
  const server = await listenLoopback(async (req, res) => {
    const body = (await readBody(req)).toString('utf8');
    const headers = flattenHeaders(req);
    requests.push({ method: req.method ?? '', path: req.url ?? '', headers, body, at: Date.now() });
    const requestId = REQUEST_ID.test(headers['x-request-id'] ?? '')
      ? headers['x-request-id']!
      : 'no-request-id';
    const step = queue.shift();
    if (step === undefined) {
      sendJson(res, 500, { error: 'script exhausted', request_id: requestId }, { 'x-request-id': requestId });
      return;
    }
    if ('drop' in step) {
      req.socket.destroy();
      return;
    }
    if ('handle' in step) {
      await step.handle(req, res);
      return;
    }
    const responseHeaders = { 'x-request-id': requestId, ...step.headers };
    if (step.raw !== undefined) {
      res.writeHead(step.status, { 'content-type': 'text/html', ...responseHeaders });
      res.end(step.raw);
      return;
    }
    const payload = step.body ?? { error: `status ${step.status}`, request_id: requestId };
    sendJson(res, step.status, payload, responseHeaders);
  });
  return { url: server.url, requests, close: () => server.close() };
}

/** Error body as the services send it, with the request id the client sent on that attempt. */
export function errorStep(status: number, error: string, headers: Record<string, string> = {}): Step {
  return {
    handle: (req, res) => {
      const requestId = String(req.headers['x-request-id']);
      sendJson(res, status, { error, request_id: requestId }, { 'x-request-id': requestId, ...headers });
    },
  };
}

/**
 * Spins real event-loop turns (setImmediate stays real under the fake timers
 * these tests use) until `condition` holds, so socket I/O can make progress.
 */
export async function waitUntil(condition: () => boolean, what: string): Promise<void> {
  for (let turn = 0; turn < 200_000; turn += 1) {
    if (condition()) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  throw new Error(`timed out waiting for ${what}`);
}
