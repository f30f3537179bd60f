import { cacheStandIn } from './module-stand-in';

type OtelApi = typeof import('@opentelemetry/api');

/** Marks the stand-in's module record (never its exports: those forward every read). */
const STAND_IN = Symbol.for('platform.lazy-otel-api');

type CachedModule = NodeJS.Module & { [STAND_IN]?: true };

function apiIndex(): string | undefined {
  try {
    return require.resolve('@opentelemetry/api');
  } catch {
    return undefined;
  }
}

/**
 * prom-client's index loads `@opentelemetry/api` (51 modules, ~0.5 MB of heap
 * and ~1 MB resident per process, issue 46) for exemplars, which no metric here
 * enables; with tracing off nothing else needs it. This puts a stand-in into
 * Node's module cache before prom-client loads: its exports forward every read
 * to the real API, loaded then (realOtelApi). Call it before anything loads the
 * API (the services' main.ts imports `@platform/service-kit/lazy-otel-api`
 * first); if the API is already loaded, or cannot be found, it does nothing.
 */
export function installLazyOtelApi(): boolean {
  const index = apiIndex();
  if (!index || require.cache[index]) return false;
  const exports = new Proxy(
    {},
    {
      get: (_target, key) => Reflect.get(realOtelApi(), key),
      has: (_target, key) => Reflect.has(realOtelApi(), key),
      ownKeys: () => Reflect.ownKeys(realOtelApi()),
      getOwnPropertyDescriptor: (_target, key) => {
        const found = Reflect.getOwnPropertyDescriptor(realOtelApi(), key);
        // A proxy may report a property only as configurable while its target lacks it.
        return found && { ...found, configurable: true };
      },
    },
  );
  (cacheStandIn(index, exports) as CachedModule)[STAND_IN] = true;
  return true;
}

/**
 * The OpenTelemetry API itself: the stand-in (installLazyOtelApi) gives way to
 * the real module, which every later `require('@opentelemetry/api')` gets
 * (the SDK's packages, when tracing starts). Call this rather than requiring
 * the API where its objects are used on a hot path.
 */
export function realOtelApi(): OtelApi {
  const index = apiIndex();
  if (index && (require.cache[index] as CachedModule | undefined)?.[STAND_IN]) delete require.cache[index];
  return require('@opentelemetry/api') as OtelApi;
}
