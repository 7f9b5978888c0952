import { defineConfig } from 'vitest/config';

// `npm run test:browser`: the web client in Debian's Chromium against a real server process.
// Needs `npm run build` first; kept apart from `npm test`, which needs no browser.
export default defineConfig({
  test: {
    root: import.meta.dirname,
    include: ['**/*.e2e.ts'],
    testTimeout: 60_000,
    hookTimeout: 90_000,
    fileParallelism: false,
    pool: 'forks',
    reporters: ['default'],
  },
});
