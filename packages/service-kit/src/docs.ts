import fs from 'node:fs';
import path from 'node:path';
import { type Response, Router } from 'express';
import { escapeHtml } from './html';

/**
 * `GET /docs`: the service's OpenAPI document (`/openapi.json`) rendered by
 * Swagger UI (swagger-ui-dist from npm), served from the service itself: no CDN,
 * no inline script, so it works offline and under helmet's default CSP
 * (`script-src 'self'`). Styled, filterable by tag (the search box), with
 * request and response examples generated from the schemas.
 */
const ASSETS = new Map([
  ['swagger-ui.css', 'text/css; charset=utf-8'],
  ['swagger-ui-bundle.js', 'text/javascript; charset=utf-8'],
  ['favicon-32x32.png', 'image/png'],
]);

/** Started by /docs/init.js; a file of its own because the CSP allows no inline script. */
const INIT_SCRIPT = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: '/openapi.json',
    dom_id: '#docs',
    deepLinking: true,
    filter: true,
    docExpansion: 'list',
    defaultModelsExpandDepth: 0,
    displayRequestDuration: true,
    tryItOutEnabled: false,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
  });
});
`;

/** Small overrides on Swagger UI's own stylesheet: one column that also reads on a phone. */
const PAGE_CSS = `body{margin:0;background:#fafafa}
.docs-head{font-family:system-ui,sans-serif;padding:12px 20px;background:#1f2937;color:#f9fafb;display:flex;gap:16px;align-items:baseline;flex-wrap:wrap}
.docs-head a{color:#93c5fd}
.swagger-ui .wrapper{padding:0 12px}
.swagger-ui .filter-container .operation-filter-input{border:1px solid #9ca3af}
`;

function assetDir(): string {
  return path.dirname(require.resolve('swagger-ui-dist/package.json'));
}

export function createDocsRouter(service: string): Router {
  const router = Router();
  const page = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(service)} API reference</title>
<link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
<link rel="stylesheet" href="/docs/page.css">
</head><body>
<header class="docs-head"><strong>${escapeHtml(service)} API reference</strong>
<span>Machine-readable: <a href="/openapi.json">/openapi.json</a></span></header>
<main id="docs"><noscript>This page needs JavaScript; the document itself is at <a href="/openapi.json">/openapi.json</a>.</noscript></main>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script>
</body></html>`;
  const cacheable = (res: Response) => res.setHeader('Cache-Control', 'public, max-age=3600');
  router.get('/docs', (_req, res) => {
    res.type('html').send(page);
  });
  router.get('/docs/init.js', (_req, res) => {
    cacheable(res);
    res.type('text/javascript').send(INIT_SCRIPT);
  });
  router.get('/docs/page.css', (_req, res) => {
    cacheable(res);
    res.type('text/css').send(PAGE_CSS);
  });
  router.get('/docs/assets/:file', (req, res, next) => {
    const type = ASSETS.get(req.params.file);
    if (!type) return next();
    const file = path.join(assetDir(), req.params.file);
    cacheable(res);
    res.setHeader('Content-Type', type);
    fs.createReadStream(file).on('error', next).pipe(res);
  });
  return router;
}
