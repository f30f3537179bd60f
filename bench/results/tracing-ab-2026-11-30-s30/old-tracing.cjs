// Throwaway: with OLD_TRACING=1 this process loads the tracing of HEAD before session 30's change.
if (process.env.OLD_TRACING === '1') {
  const Module = require('node:module');
  const orig = Module._resolveFilename;
  Module._resolveFilename = function (request, parent, ...rest) {
    const r = orig.call(this, request, parent, ...rest);
    if (r.includes('/packages/service-kit/dist/')) return r.replace('/packages/service-kit/dist/', '/packages/service-kit/dist-old/');
    if (r.endsWith('/apps/gateway/dist/observability/spans.js')) return r.replace(/spans\.js$/, 'spans-old.js');
    return r;
  };
}
