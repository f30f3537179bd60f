import Module from 'node:module';

/**
 * Puts a module record with `exports` into Node's module cache under
 * `filename`, as if that file had been loaded: every later `require` of it
 * gets `exports` until the record is removed. For the lazy stand-ins
 * (lazy-zod-locales.ts, otel-api.ts); returns the record.
 */
export function cacheStandIn(filename: string, exports: object): NodeJS.Module {
  const stand = new Module(filename);
  stand.filename = filename;
  stand.exports = exports;
  stand.loaded = true;
  require.cache[filename] = stand;
  return stand;
}
