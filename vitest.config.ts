import { defineConfig } from 'vitest/config';

// `npm test` runs every test on SQLite; with SVC_TEST_DATABASE_URL set to a PostgreSQL URL it
// runs them on PostgreSQL as well, each file in a schema of its own.
const pgUrl = process.env.SVC_TEST_DATABASE_URL;

const shared = {
  include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
  testTimeout: 30_000,
  hookTimeout: 60_000,
};

export default defineConfig({
  // Node resolves `graphql` to its CommonJS entry (the package has no exports map), as
  // graphql-jit's own import of it does; Vite would take the `module` entry for our sources, a
  // second copy whose types graphql-jit refuses ("from another module or realm").
  resolve: { alias: [{ find: /^graphql$/, replacement: 'graphql/index.js' }] },
  test: {
    pool: 'forks',
    maxWorkers: 2,
    // A worker keeps the modules it loaded from one test file to the next: loading the server's
    // module graph afresh for each of some 500 files took 40% of a run's time. Each file still
    // builds its own world (database, context, servers) and closes it; nothing in src/ keeps
    // state in a module that outlives a context, and tests change no process-wide setting they
    // do not restore (docs/testing.md).
    isolate: false,
    reporters: ['default'],
    projects: [
      {
        extends: true as const,
        test: { ...shared, name: 'sqlite', env: { SVC_TEST_DB: 'sqlite' } },
      },
      ...(pgUrl
        ? [
            {
              extends: true as const,
              test: { ...shared, name: 'postgres', env: { SVC_TEST_DB: 'postgres' } },
            },
          ]
        : []),
    ],
  },
});
