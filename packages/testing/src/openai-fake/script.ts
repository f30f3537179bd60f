import type { ServerResponse } from 'node:http';
import { sendJson, waitUnlessClosed } from '../http-server';
import type { RecordedRequest } from './recorder';

/** Knobs every provider fake understands. */
export type CommonBehaviour = {
  /** Delay before the response headers are sent. */
  latencyMs?: number;
  /** Answer with this HTTP status and a provider-shaped error body instead of a result. */
  status?: number;
  /** Overrides parts of the error body sent with `status`. */
  error?: { message?: string; type?: string; code?: string | null; param?: string | null };
  /** `retry-after` header (seconds) sent with the error; 429 gets 1 by default, `null` sends none. */
  retryAfter?: number | string | null;
  /** Extra response headers. */
  headers?: Record<string, string>;
  /** Never answer; the request stays open until the client aborts or the fake closes. */
  hang?: boolean;
  /** Reset the connection before sending anything (the client sees ECONNRESET / socket closed). */
  reset?: boolean;
  /**
   * A provider that is down until this time (epoch ms): every request before
   * it gets `downStatus` (default 503; 0 resets the connection), later ones
   * the rest of the behaviour. Scripts "down for a while, then recovers".
   */
  downUntil?: number;
  downStatus?: number;
};

/** A scripted behaviour that applies to one request; `model` limits it to requests for that model. */
export type Queued<B> = B & { model?: string };

/**
 * Decides one request's behaviour from its body, as an agent's model would
 * (answer a tool result, else ask for a tool): `undefined` leaves the request
 * to the rest of the script. Taken before the queue, whose one-shots stay queued.
 */
export type Responder<B> = (body: Record<string, unknown>) => B | undefined;

/**
 * Behaviour resolution: a responder's decision or a queued one-shot (first match) over the per-model
 * setting over the fake-wide default; fields merge in that order.
 */
export type Script<B> = {
  /** Sets the fake-wide default behaviour (replaces the previous default). */
  set(behaviour: B): void;
  /** Sets the behaviour for one model (or voice/endpoint key). */
  setFor(model: string, behaviour: B): void;
  /** Adds one-shot behaviours consumed in order by the next matching requests. */
  enqueue(...behaviours: Queued<B>[]): void;
  /** Clears default, per-model and queued behaviours. */
  reset(): void;
  /** Sets (or, with undefined, removes) the responder; reset() removes it too. */
  respond(responder: Responder<B> | undefined): void;
  resolve(model: string | undefined, body?: Record<string, unknown>): B;
};

export function createScript<B extends object>(initial: B): Script<B> {
  let fallback: B = { ...initial };
  const perModel = new Map<string, B>();
  const queue: Queued<B>[] = [];
  let responder: Responder<B> | undefined;
  const take = (model: string | undefined, body: Record<string, unknown> | undefined) => {
    const decided = body && responder ? responder(body) : undefined;
    if (decided) return decided;
    const index = queue.findIndex((q) => q.model === undefined || q.model === model);
    return index >= 0 ? queue.splice(index, 1)[0] : undefined;
  };
  return {
    set(behaviour) {
      fallback = { ...behaviour };
    },
    setFor(model, behaviour) {
      perModel.set(model, behaviour);
    },
    enqueue(...behaviours) {
      queue.push(...behaviours);
    },
    reset() {
      fallback = { ...initial };
      perModel.clear();
      queue.length = 0;
      responder = undefined;
    },
    respond(fn) {
      responder = fn;
    },
    resolve(model, body) {
      const { model: _scope, ...oneShot } = (take(model, body) ?? {}) as Queued<B>;
      return { ...fallback, ...(model !== undefined ? perModel.get(model) : undefined), ...oneShot } as B;
    },
  };
}

/**
 * Applies latency, hang and error knobs. Returns true when the request has
 * been dealt with (answered with an error, hung, or abandoned by the client).
 */
export async function applyCommonBehaviour(
  behaviour: CommonBehaviour,
  res: ServerResponse,
  record: RecordedRequest,
  errorBody: (status: number, error: CommonBehaviour['error']) => unknown,
): Promise<boolean> {
  if (behaviour.latencyMs && !(await waitUnlessClosed(res, behaviour.latencyMs))) return true;
  if (behaviour.hang) return true;
  const down = behaviour.downUntil !== undefined && Date.now() < behaviour.downUntil;
  const status = down ? (behaviour.downStatus ?? 503) : behaviour.status;
  if (behaviour.reset || status === 0) {
    record.destroyedByFake = true;
    res.socket?.resetAndDestroy();
    return true;
  }
  if (status !== undefined && status >= 400) {
    const headers: Record<string, string> = { ...behaviour.headers };
    const retryAfter =
      behaviour.retryAfter === null ? undefined : (behaviour.retryAfter ?? (status === 429 ? 1 : undefined));
    if (retryAfter !== undefined) headers['retry-after'] = String(retryAfter);
    reply(res, record, status, errorBody(status, down ? {} : behaviour.error), headers);
    return true;
  }
  return false;
}

/** Sends JSON and notes the status in the request log. */
export function reply(
  res: ServerResponse,
  record: RecordedRequest,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  record.status = status;
  sendJson(res, status, body, headers);
}
