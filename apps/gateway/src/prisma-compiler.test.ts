import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createTestDatabase, type TestDatabase } from '@platform/testing';
import { GATEWAY_MIGRATIONS_DIR } from '../test/support/gateway-app';
import { PrismaClient } from './generated/prisma/client';
import { COMPILER_BASE64_MODULE, compileQueryCompilerFromFile, wasmBytesOf } from './prisma-compiler';

describe('compileQueryCompilerFromFile', () => {
  it('names the module the generated client imports for its compiler', () => {
    const generated = readFileSync(
      path.join(__dirname, 'generated', 'prisma', 'internal', 'class.ts'),
      'utf8',
    );
    expect(generated).toContain(`import("${COMPILER_BASE64_MODULE}")`);
  });

  it('reads the wasm from the module text, and nothing from other text', () => {
    const bytes = wasmBytesOf(readFileSync(require.resolve(COMPILER_BASE64_MODULE), 'latin1'));
    expect(bytes?.subarray(0, 4)).toEqual(Buffer.from([0, 0x61, 0x73, 0x6d]));
    expect(wasmBytesOf('module.exports = {}')).toBeNull();
    expect(wasmBytesOf('const wasm = "bm90IHdhc20="')).toBeNull();
  });

  describe('on a client', () => {
    let db: TestDatabase;
    beforeAll(async () => {
      db = await createTestDatabase({ migrationsDir: GATEWAY_MIGRATIONS_DIR });
    });
    afterAll(async () => {
      await db.drop();
    });

    it('applies, and the client plans its queries with the compiler it read', async () => {
      const prisma = new PrismaClient({ adapter: db.adapter });
      const config = (prisma as unknown as { _engine: { config: { compilerWasm: object } } })._engine.config
        .compilerWasm as { getQueryCompilerWasmModule: () => Promise<object> };
      const own = jest.spyOn(config, 'getQueryCompilerWasmModule');
      expect(compileQueryCompilerFromFile(prisma)).toBe(true);
      const ours = jest.spyOn(config, 'getQueryCompilerWasmModule');
      try {
        expect(await prisma.user.count()).toBe(0);
        expect(ours).toHaveBeenCalledTimes(1);
        const compiled = await ours.mock.results[0]?.value;
        expect(Object.prototype.toString.call(compiled)).toBe('[object WebAssembly.Module]');
        expect(own).not.toHaveBeenCalled();
      } finally {
        await prisma.$disconnect();
      }
    });
  });

  it('leaves an object without the engine config alone', () => {
    expect(compileQueryCompilerFromFile({})).toBe(false);
  });
});
