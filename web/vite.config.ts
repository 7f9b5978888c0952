import { defineConfig } from 'vite';

// The web client: Preact through its automatic JSX runtime (no plugin), built to dist/web with
// content-hashed names under assets/ (the server caches those for a year and never index.html).
// The service worker is built beside the page as /sw.js (its address must not change), and
// public/ holds the icons the manifest names (fixed names at the root).
export default defineConfig({
  root: import.meta.dirname,
  base: '/',
  publicDir: 'public',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  resolve: {
    alias: { react: 'preact/compat', 'react-dom': 'preact/compat' },
  },
  build: {
    outDir: '../dist/web',
    emptyOutDir: true,
    assetsDir: 'assets',
    target: 'es2022',
    sourcemap: false,
    modulePreload: { polyfill: false },
    // Keep every asset a file: inlined data URLs would need looser CSP sources for no gain.
    assetsInlineLimit: 0,
    reportCompressedSize: false,
    rolldownOptions: {
      input: {
        index: `${import.meta.dirname}/index.html`,
        sw: `${import.meta.dirname}/src/sw/service-worker.ts`,
      },
      output: {
        entryFileNames: (chunk) => (chunk.name === 'sw' ? 'sw.js' : 'assets/[name]-[hash].js'),
      },
    },
  },
  worker: { format: 'es' },
  server: {
    // `npm run web:dev` proxies the API to a server on 8080, so the page and the API share an origin.
    proxy: {
      '/api': { target: 'http://127.0.0.1:8080', ws: true },
    },
  },
});
