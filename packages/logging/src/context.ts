import { AsyncLocalStorage } from 'node:async_hooks';

/** Per-request context, visible to every log call made while serving it. */
export type RequestContext = { requestId: string };

export const requestContext = new AsyncLocalStorage<RequestContext>();

export function currentRequestId(): string | undefined {
  return requestContext.getStore()?.requestId;
}
