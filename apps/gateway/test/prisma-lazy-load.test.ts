// Issue 46: a worker loads Prisma's client only when a console or admin route
// first uses it (src/lazy-prisma.ts), which keeps ~5 MB of resident memory out
// of every worker that serves AI requests. This holds the module side of that
// line: nothing the server loads at start imports the generated client as a
// value. (chat-path-prisma-free.int.test.ts holds the other side: no AI route and
// no readiness probe runs a Prisma query.)

describe('the worker at start', () => {
  it('loads the server, the app and every route without loading the generated Prisma client', () => {
    const loaded: string[] = [];
    jest.isolateModules(() => {
      jest.doMock('../src/generated/prisma/client', () => {
        loaded.push('../src/generated/prisma/client');
        throw new Error('the generated Prisma client was imported at start');
      });
      // What main.ts runs in a worker: the server module, which imports the app and every route.
      const server = require('../src/server') as typeof import('../src/server');
      const app = require('../src/app') as typeof import('../src/app');
      expect(typeof server.main).toBe('function');
      expect(typeof app.createApp).toBe('function');
    });
    expect(loaded).toEqual([]);
  });

  it('would notice an import of it (the check can fail)', () => {
    jest.isolateModules(() => {
      jest.doMock('../src/generated/prisma/client', () => {
        throw new Error('the generated Prisma client was imported at start');
      });
      // The one module that still imports it as a value: the billing-export command (its own process).
      expect(() => require('../src/billing-export-main')).toThrow(
        'the generated Prisma client was imported at start',
      );
    });
  });
});
