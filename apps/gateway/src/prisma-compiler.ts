import { readFileSync } from 'node:fs';

/**
 * The module Prisma's generated client imports for its query compiler (the
 * `compilerBuild = "small"` build for PostgreSQL, prisma/schema.prisma): one
 * line, `const wasm = "<base64>"`, then `module.exports = { wasm }`.
 */
export const COMPILER_BASE64_MODULE =
  '@prisma/client/runtime/query_compiler_small_bg.postgresql.wasm-base64.js';

/** The part of the WebAssembly global used here (the gateway's TypeScript libs do not declare it). */
type WasmModule = object;
const wasmApi = (
  globalThis as unknown as {
    WebAssembly: { Module: new (bytes: Uint8Array) => WasmModule; validate(bytes: Uint8Array): boolean };
  }
).WebAssembly;

type CompilerWasm = { getQueryCompilerWasmModule?: () => Promise<WasmModule> };

/** The bytes of the wasm in that module's text, or null when the text is not shaped as above. */
export function wasmBytesOf(source: string): Buffer | null {
  const open = source.indexOf('"');
  const close = open === -1 ? -1 : source.indexOf('"', open + 1);
  if (close === -1) return null;
  const bytes = Buffer.from(source.slice(open + 1, close), 'base64');
  return wasmApi.validate(bytes) ? bytes : null;
}

/**
 * Has the client compile its query compiler from the module's file, read as
 * text and dropped, instead of importing the module. Imported, its 2.3 MB of
 * base64 stay in every worker for good, twice (as the module's source and as
 * the exported string), and the import() starts Node's ESM loader: measured
 * in one process after a first query, 85 -> 73 MB of RSS, heap 12.0 -> 9.8
 * MB, external 8.1 -> 3.7 MB (issue 46). The compiled module is the same.
 *
 * Reaches into the client's engine config (not a public API): when a Prisma
 * upgrade moves it, or the file is not the expected one, the client keeps
 * its own loader and this returns false (prisma-compiler.test.ts checks
 * that it still applies).
 */
export function compileQueryCompilerFromFile(prisma: object): boolean {
  const wasm = (prisma as { _engine?: { config?: { compilerWasm?: CompilerWasm } } })._engine?.config
    ?.compilerWasm;
  const own = wasm?.getQueryCompilerWasmModule;
  if (!wasm || typeof own !== 'function') return false;
  wasm.getQueryCompilerWasmModule = async () => {
    const bytes = wasmBytesOf(readFileSync(require.resolve(COMPILER_BASE64_MODULE), 'latin1'));
    return bytes ? new wasmApi.Module(bytes) : own();
  };
  return true;
}
