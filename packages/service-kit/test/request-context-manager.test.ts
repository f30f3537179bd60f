import { setImmediate as tick } from 'node:timers/promises';
import { type Context, createContextKey, ROOT_CONTEXT } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { requestContext } from '@platform/logging';
import { requestScopedContextManager } from '../src/request-context-manager';

const key = createContextKey('test value');
const ctx = (name: string): Context => ROOT_CONTEXT.setValue(key, name);
const nameOf = (c: Context) => c.getValue(key) ?? 'root';

describe("the request-scoped context manager: a request's context in the request's store", () => {
  const manager = requestScopedContextManager(AsyncLocalStorageContextManager, ROOT_CONTEXT);

  it("keeps a request's context for all of its code, without a run, and nowhere else", async () => {
    const seen: string[] = [];
    const request = (name: string) =>
      requestContext.run({ requestId: name }, async () => {
        expect(manager.enterRequest(ctx(name))).toBe(true);
        await tick();
        seen.push(`${name}:${nameOf(manager.active())}`);
        await new Promise((resolve) => setTimeout(resolve, 5));
        seen.push(`${name}:${nameOf(manager.active())}`);
      });
    await Promise.all([request('a'), request('b')]);
    expect(seen.sort()).toEqual(['a:a', 'a:a', 'b:b', 'b:b']);
    expect(manager.active()).toBe(ROOT_CONTEXT);
  });

  it('prefers the innermost with-scope, the root included, and returns to the request after it', async () => {
    await requestContext.run({ requestId: 'r' }, async () => {
      manager.enterRequest(ctx('request'));
      const inner = await manager.with(ctx('attempt'), async () => {
        await tick();
        const nested = manager.with(ROOT_CONTEXT, () => manager.active());
        return [nameOf(manager.active()), nested];
      });
      expect(inner).toEqual(['attempt', ROOT_CONTEXT]);
      expect(nameOf(manager.active())).toBe('request');
    });
  });

  it('refuses to set a context outside a request, twice, or inside a with-scope', () => {
    expect(manager.enterRequest(ctx('nowhere'))).toBe(false);
    requestContext.run({ requestId: 'r' }, () => {
      expect(manager.with(ctx('scope'), () => manager.enterRequest(ctx('late')))).toBe(false);
      expect(requestContext.getStore()?.otel).toBeUndefined();
      expect(manager.enterRequest(ctx('first'))).toBe(true);
      expect(manager.enterRequest(ctx('second'))).toBe(false);
      expect(nameOf(manager.active())).toBe('first');
    });
  });

  it('binds functions and attaches as the base manager does, over the request', () => {
    requestContext.run({ requestId: 'r' }, () => {
      manager.enterRequest(ctx('request'));
      const bound = manager.bind(ctx('bound'), () => nameOf(manager.active()));
      expect(bound()).toBe('bound');
      const token = manager.attach(ctx('attached'));
      expect(nameOf(manager.active())).toBe('attached');
      token.dispose();
      token.dispose();
      expect(nameOf(manager.active())).toBe('request');
    });
  });
});
