import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Per-request state, visible to everything the request runs: the one
 * AsyncLocalStorage store of a request. Other packages keep their own
 * per-request state here (declaration merging: `declare module
 * '@platform/logging' { interface RequestContext { ... } }`) instead of an
 * AsyncLocalStorage of their own: on Node 24 every `run` copies the frame's
 * map of stores, so each extra store and run is paid on every request
 * (bench/results/tracing-cost.md, session 19). A field set on the store is
 * seen by all of the request's code from then on, not only by a callback's
 * descendants: only state that is the request's as a whole belongs here.
 */
export interface RequestContext {
  requestId: string;
}

export const requestContext = new AsyncLocalStorage<RequestContext>();

export function currentRequestId(): string | undefined {
  return requestContext.getStore()?.requestId;
}
