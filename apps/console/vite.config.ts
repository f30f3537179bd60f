import { defaultClientConditions, defineConfig } from 'vite';

// Relative asset URLs, so the console also works when the gateway sits under
// a path prefix. Nothing is inlined as a data: URL and no inline script is
// emitted: the gateway serves the page with a CSP that allows 'self' only.
export default defineConfig({
  base: './',
  // Workspace packages resolve to their TypeScript source, as under tsc and jest.
  resolve: { conditions: ['source', ...defaultClientConditions] },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    target: 'es2022',
    sourcemap: false,
  },
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
});
