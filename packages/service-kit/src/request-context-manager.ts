import { AsyncLocalStorage } from 'node:async_hooks';
import type { Context, ContextManager } from '@opentelemetry/api';
import type { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { requestContext } from '@platform/logging';

declare module '@platform/logging' {
  interface RequestContext {
    /** The request's OpenTelemetry context (its SERVER span), set once by traceRequests. */
    otel?: Context;
  }
}

type Token = ReturnType<AsyncLocalStorageContextManager['attach']>;

/**
 * OpenTelemetry's AsyncLocalStorage context manager, with one change: the
 * context of a request as a whole lives in the request's own store
 * (`@platform/logging`'s requestContext, which the request-id middleware
 * enters anyway) instead of a `run` of a second AsyncLocalStorage. On Node 24
 * every `run` copies the frame's map of stores; the request span's activation
 * was one run and one more store copied by every later run of the request.
 *
 * `with` (attempt and tool-call spans, anything a library activates) still
 * runs an AsyncLocalStorage of this manager's own, and the innermost of those
 * wins: `active()` is that scope's context, else the request's, else the
 * root. A request's context is set with `enterRequest` only when no `with`
 * scope is open (as in traceRequests, the first thing a request runs), so a
 * scope opened later always lies inside the request and is rightly preferred.
 * `bind` (functions, event emitters) is the base class's, built on `with`.
 */
export function requestScopedContextManager(
  Base: typeof AsyncLocalStorageContextManager,
  root: Context,
): ContextManager & RequestScoped & { attach(context: Context): Token } {
  class RequestScopedContextManager extends Base implements RequestScoped {
    private readonly scopes = new AsyncLocalStorage<Context>();

    override active(): Context {
      return this.scopes.getStore() ?? requestContext.getStore()?.otel ?? root;
    }

    override with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
      context: Context,
      fn: F,
      thisArg?: ThisParameterType<F>,
      ...args: A
    ): ReturnType<F> {
      const cb = thisArg == null ? fn : (fn.bind(thisArg) as F);
      return this.scopes.run(context, cb, ...args);
    }

    override attach(context: Context): Token {
      const scopes = this.scopes as AsyncLocalStorage<Context> & { withScope?: (c: Context) => Token };
      if (scopes.withScope) return scopes.withScope(context);
      const previous = scopes.getStore();
      scopes.enterWith(context);
      let disposed = false;
      return {
        dispose: () => {
          if (disposed) return;
          disposed = true;
          scopes.enterWith(previous as Context);
        },
      } as Token;
    }

    override disable(): this {
      this.scopes.disable();
      return super.disable();
    }

    enterRequest(context: Context): boolean {
      const store = requestContext.getStore();
      if (!store || store.otel !== undefined || this.scopes.getStore() !== undefined) return false;
      store.otel = context;
      return true;
    }
  }
  return new RequestScopedContextManager();
}

export type RequestScoped = {
  /**
   * Makes `context` the current request's context for all of its code from
   * now on, without a `run`; false (nothing set) outside a request store, when
   * the request already has one, or inside a `with` scope: then the caller
   * falls back to `context.with`.
   */
  enterRequest(context: Context): boolean;
};
