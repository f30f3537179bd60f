// Issue 46: the gateway imports this package but never limits requests with
// express-rate-limit (the payment service does); the package's index must not
// load it, createWindowLimit loads it on its first call.
describe('createWindowLimit', () => {
  it('loads express-rate-limit on its first call, not with the package', () => {
    let loads = 0;
    jest.isolateModules(() => {
      const real = jest.requireActual<typeof import('express-rate-limit')>('express-rate-limit');
      jest.doMock('express-rate-limit', () => {
        loads += 1;
        return real;
      });
      const kit = require('../src/index') as typeof import('../src/index');
      expect(loads).toBe(0);
      const kv = { incrWindow: async () => ({ total: 1, resetMs: 1000 }) };
      const limit = { name: 'test', max: 5, windowMs: 60_000 };
      const first = kit.createWindowLimit({ kv, limit, keyOf: () => 'a' });
      const second = kit.createWindowLimit({ kv, limit, keyOf: () => 'b' });
      expect(typeof first).toBe('function');
      expect(typeof second).toBe('function');
      expect(loads).toBe(1);
    });
  });
});
