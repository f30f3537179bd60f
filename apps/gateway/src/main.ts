// First: zod's unused message locales, and the OpenTelemetry API prom-client loads, then load
// only when asked for (lazy-zod-locales.ts, otel-api.ts).
import '@platform/service-kit/lazy-zod-locales';
import '@platform/service-kit/lazy-otel-api';
import { runCluster } from '@platform/service-kit/cluster';

/**
 * Entry point (`node dist/main.js`). Decides the process layout from WORKERS,
 * DATABASE_URL and REDIS_URL before anything heavy loads: the cluster primary
 * never loads Express, Prisma or the app; each worker (or the single process)
 * imports ./server and runs it.
 */
runCluster({
  service: 'gateway',
  run: async () => {
    const { main } = await import('./server.js');
    await main();
  },
});
