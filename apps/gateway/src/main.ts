// First: zod's unused message locales then load only when asked for (lazy-zod-locales.ts).
import '@platform/service-kit/lazy-zod-locales';
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
