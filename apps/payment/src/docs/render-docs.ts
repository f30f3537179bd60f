import { escapeHtml } from '@platform/service-kit';
import { Router } from 'express';

type Operation = {
  summary?: string;
  description?: string;
  security?: unknown[];
  parameters?: Array<{ name: string; in: string; required?: boolean; description?: string }>;
  requestBody?: { content?: Record<string, { schema?: unknown }> };
  responses?: Record<string, { description?: string }>;
};

type OpenApiDoc = {
  info?: { title?: string; description?: string; version?: string };
  paths?: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, unknown> };
};

function schemaName(schema: unknown): string {
  const ref = (schema as { $ref?: string } | undefined)?.$ref;
  return ref ? (ref.split('/').at(-1) ?? '') : 'inline schema';
}

function renderOperation(method: string, path: string, op: Operation): string {
  const params = (op.parameters ?? [])
    .map(
      (p) =>
        `<li><code>${escapeHtml(p.name)}</code> (${escapeHtml(p.in)}${p.required ? ', required' : ''}) ${escapeHtml(p.description)}</li>`,
    )
    .join('');
  const body = op.requestBody?.content?.['application/json']?.schema;
  const responses = Object.entries(op.responses ?? {})
    .map(([code, r]) => `<li><code>${escapeHtml(code)}</code> ${escapeHtml(r.description)}</li>`)
    .join('');
  return `<section><h3><code>${escapeHtml(method.toUpperCase())} ${escapeHtml(path)}</code></h3>
<p><strong>${escapeHtml(op.summary)}</strong>${op.security?.length ? ' — requires <code>X-API-Key</code>' : ''}</p>
<p>${escapeHtml(op.description)}</p>
${params ? `<h4>Parameters</h4><ul>${params}</ul>` : ''}
${body ? `<h4>Request body</h4><p><a href="#schema-${escapeHtml(schemaName(body))}">${escapeHtml(schemaName(body))}</a></p>` : ''}
<h4>Responses</h4><ul>${responses}</ul></section>`;
}

/**
 * Renders the OpenAPI document as one static HTML page, on the server and
 * without scripts, so it works under helmet's default CSP and offline.
 */
export function renderDocsPage(doc: OpenApiDoc): string {
  const operations = Object.entries(doc.paths ?? {})
    .flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, op]) => renderOperation(method, path, op)),
    )
    .join('\n');
  const schemas = Object.entries(doc.components?.schemas ?? {})
    .map(
      ([name, schema]) =>
        `<h3 id="schema-${escapeHtml(name)}">${escapeHtml(name)}</h3><pre>${escapeHtml(JSON.stringify(schema, null, 2))}</pre>`,
    )
    .join('\n');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(doc.info?.title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}pre{background:#f4f4f4;padding:.5rem;overflow:auto}section{border-top:1px solid #ddd}</style>
</head><body><h1>${escapeHtml(doc.info?.title)} <small>${escapeHtml(doc.info?.version)}</small></h1>
<p>${escapeHtml(doc.info?.description)} Machine-readable: <a href="/openapi.json">/openapi.json</a>.</p>
<h2>Operations</h2>${operations}<h2>Schemas</h2>${schemas}</body></html>`;
}

/** `GET /docs`: the interface description as a readable page (public, like /openapi.json). */
export function createDocsRouter(buildDoc: () => object): Router {
  const router = Router();
  let page: string | undefined;
  router.get('/docs', (_req, res) => {
    page ??= renderDocsPage(buildDoc() as OpenApiDoc);
    res.type('html').send(page);
  });
  return router;
}
