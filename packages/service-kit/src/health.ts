import { Router } from 'express';

/** Liveness and the interface description, both public. Liveness: answers while the process serves HTTP. */
export function createHealthRouter(service: string, openapi: () => object): Router {
  const router = Router();
  router.get('/health', (_req, res) => {
    res.json({ status: 'ok', timestamp: new Date().toISOString(), service });
  });
  let doc: object | undefined;
  router.get('/openapi.json', (_req, res) => {
    doc ??= openapi();
    res.json(doc);
  });
  return router;
}
