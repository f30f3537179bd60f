import { Router } from 'express';
import { createDocsRouter } from './docs';

/** One dependency `/health/ready` reports on. */
export type ReadinessCheck = {
  /** Name in the report, e.g. `database`, `key_value_store`, `smtp`. */
  name: string;
  /** A required dependency that is down makes the service not ready (503). */
  required: boolean;
  /** Resolves true when the dependency answers; false or a rejection means down. */
  check(): Promise<boolean>;
  /** Extra facts shown under `details.<name>` in the report (e.g. a queue's lag); never decides readiness. */
  details?(): Promise<unknown>;
};

/** Longest a readiness probe waits for one dependency; probes time out at a few seconds. */
const CHECK_TIMEOUT_MS = 1500;

function bounded(check: () => Promise<boolean>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), CHECK_TIMEOUT_MS);
    timer.unref();
  });
  const outcome = Promise.resolve()
    .then(check)
    .then(
      (ok) => ok === true,
      () => false,
    );
  return Promise.race([outcome, timeout]).finally(() => clearTimeout(timer));
}

/** Details within the same bound as a check; `{ unavailable: true }` when they do not come in time. */
async function boundedDetails(read: () => Promise<unknown> | undefined): Promise<unknown> {
  let value: unknown = { unavailable: true };
  const ok = await bounded(async () => {
    value = await read();
    return true;
  });
  return ok ? value : { unavailable: true };
}

/**
 * Liveness (`/health`: answers while the process serves HTTP, touches nothing),
 * readiness (`/health/ready`: every dependency checked in parallel, each within
 * 1.5 s; 503 while a required one is down) and the interface description
 * (`/openapi.json`, rendered for people at `/docs`).
 */
export function createHealthRouter(
  service: string,
  openapi: () => object,
  readiness: ReadinessCheck[] = [],
): Router {
  const router = Router();
  router.get('/health', (_req, res) => {
    res.json({ status: 'ok', timestamp: new Date().toISOString(), service });
  });
  router.get('/health/ready', async (_req, res) => {
    const results = await Promise.all(readiness.map((c) => bounded(() => c.check())));
    const checks = Object.fromEntries(readiness.map((c, i) => [c.name, results[i] ? 'up' : 'down']));
    const ready = readiness.every((c, i) => !c.required || results[i]);
    const detailed = readiness.filter((c) => c.details);
    const details = await Promise.all(detailed.map((c) => boundedDetails(() => c.details?.())));
    const report = {
      status: ready ? 'ready' : 'not_ready',
      timestamp: new Date().toISOString(),
      service,
      checks,
      ...(detailed.length > 0
        ? { details: Object.fromEntries(detailed.map((c, i) => [c.name, details[i]])) }
        : {}),
    };
    res.setHeader('Cache-Control', 'no-store');
    if (ready) res.json(report);
    else {
      const requestId = typeof res.locals.requestId === 'string' ? res.locals.requestId : '';
      res.status(503).json({
        error: 'service unavailable',
        code: 'service_unavailable',
        request_id: requestId,
        ...report,
      });
    }
  });
  let doc: object | undefined;
  router.get('/openapi.json', (_req, res) => {
    doc ??= openapi();
    res.json(doc);
  });
  router.use(createDocsRouter(service));
  return router;
}

/**
 * The two dependencies every service needs to answer: its database (a trivial
 * query through the service's own client) and the key-value store.
 */
export function storageReadiness(storage: {
  queryDatabase: () => Promise<unknown>;
  kv: { ping(): Promise<boolean> };
}): ReadinessCheck[] {
  return [
    {
      name: 'database',
      required: true,
      check: async () => {
        await storage.queryDatabase();
        return true;
      },
    },
    { name: 'key_value_store', required: true, check: () => storage.kv.ping() },
  ];
}
