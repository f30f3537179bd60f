import type { PrismaClient } from './generated/prisma/client';

/**
 * A PrismaClient made on its first use. A worker that serves only AI requests
 * and probes never needs one: every statement of the AI routes, the readiness
 * check and the workers' timers goes through the pool's raw SQL (`sql`; issue
 * 46, docs/performance.md). Loading Prisma's runtime and the generated client
 * at start cost each worker ~5 MB of resident memory for nothing; now the
 * console and admin routes load it on their first call (~40 ms once per
 * worker). `$disconnect` of a client never made does nothing, and neither an
 * `await` of this object nor a symbol lookup (`util.inspect`) makes one.
 */
export function lazyPrismaClient(make: () => PrismaClient): PrismaClient {
  let real: PrismaClient | undefined;
  // Methods bound to the real client once each, so repeated calls allocate nothing.
  const bound = new Map<PropertyKey, { of: unknown; fn: unknown }>();
  const client = (): PrismaClient => {
    real ??= make();
    return real;
  };
  return new Proxy({} as PrismaClient, {
    get(_target, key) {
      if (!real && (key === '$disconnect' || key === 'then' || typeof key === 'symbol')) {
        return key === '$disconnect' ? async () => {} : undefined;
      }
      const c = client();
      const value: unknown = Reflect.get(c, key, c);
      if (typeof value !== 'function') return value;
      const known = bound.get(key);
      if (known?.of === value) return known.fn;
      const fn: unknown = value.bind(c);
      bound.set(key, { of: value, fn });
      return fn;
    },
    has: (_target, key) => key in client(),
  });
}
