import { inspect } from 'node:util';
import type { PrismaClient } from './generated/prisma/client';
import { lazyPrismaClient } from './lazy-prisma';

/** A stand-in with the shape the proxy forwards: a model delegate, methods that read `this`. */
function fakeClient() {
  const client = {
    user: { findMany: jest.fn(async () => ['row']) },
    disconnected: false,
    async $disconnect(this: { disconnected: boolean }) {
      this.disconnected = true;
    },
    async $queryRaw(this: unknown, strings: TemplateStringsArray, ...values: unknown[]) {
      return { self: this, sql: strings.join('?'), values };
    },
  };
  return client;
}

describe('lazyPrismaClient', () => {
  it('makes nothing until a property is used, however it is passed around', async () => {
    const make = jest.fn(() => fakeClient() as unknown as PrismaClient);
    const prisma = lazyPrismaClient(make);

    // Passed to wiring code, returned from an async function, inspected, disconnected: none of it makes one.
    const passed = await Promise.resolve(prisma);
    expect(passed).toBe(prisma);
    inspect(prisma);
    await prisma.$disconnect();
    expect(make).not.toHaveBeenCalled();
  });

  it('makes the client once, on first use, and forwards to it with `this` bound', async () => {
    const real = fakeClient();
    const make = jest.fn(() => real as unknown as PrismaClient);
    const prisma = lazyPrismaClient(make);

    const users = await (prisma as unknown as typeof real).user.findMany();
    expect(users).toEqual(['row']);
    const raw = (await prisma.$queryRaw`SELECT ${1}`) as unknown as { self: unknown; sql: string };
    expect(raw).toMatchObject({ self: real, sql: 'SELECT ?' });
    // The same bound function each time (no allocation per call), and one client.
    expect(prisma.$queryRaw).toBe(prisma.$queryRaw);
    expect('user' in prisma).toBe(true);
    expect(make).toHaveBeenCalledTimes(1);

    // Once made, $disconnect is the client's own.
    await prisma.$disconnect();
    expect(real.disconnected).toBe(true);
  });

  it('retries a failed make at the next use (a start-up error is not kept)', () => {
    let attempts = 0;
    const prisma = lazyPrismaClient(() => {
      attempts += 1;
      if (attempts === 1) throw new Error('adapter not ready');
      return fakeClient() as unknown as PrismaClient;
    });
    expect(() => prisma.$queryRaw).toThrow('adapter not ready');
    expect(typeof prisma.$queryRaw).toBe('function');
    expect(attempts).toBe(2);
  });
});
