import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

// Layers import one way: edge -> service -> queries -> db. The rules below refuse imports "up"
// a layer (a service reaching into the HTTP edge, a query function into services, ...).
const upward = (from, forbidden) => ({
  files: [`src/${from}/**/*.ts`],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: forbidden
          .map((layer) => ({
            group: [`**/${layer}/**`, `**/${layer}/*`],
            message: `src/${from} must not import from src/${layer} (layers import one way: edge -> service -> queries -> db)`,
          }))
          .concat(DRIVER_WORK_USERS.includes(from) ? [] : [DRIVER_WORK]),
      },
    ],
  },
});

// db/ is the port (Db, Tx, Executor, tables, owners, statements/); db/sqlite and db/postgres
// are the driver work behind it, opened by db/open.ts. Only db/ itself and the whole-database
// tools of data/ (backup, bulk load: they speak to pg directly) reach behind the port.
const DRIVER_WORK_USERS = ['db', 'data'];
const DRIVER_WORK = {
  group: ['**/db/sqlite/**', '**/db/postgres/**'],
  message:
    'db/sqlite and db/postgres are the driver work behind the port: use db/database.ts, db/types.ts, db/transaction.ts or db/statements',
};

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'dist.*/**',
      'node_modules/**',
      'data/**',
      'coverage/**',
      'bench/results/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'error',
      eqeqeq: ['error', 'always'],
    },
  },
  {
    files: ['src/cli/**/*.ts', 'bench/**', 'scripts/**', 'bin/**'],
    rules: { 'no-console': 'off' },
  },
  {
    // The web client runs in the browser, apart from the server's layers.
    files: ['web/src/**/*.{ts,tsx}'],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    files: ['web/e2e/**', 'bench/web/**'],
    rules: { 'no-console': 'off' },
  },
  {
    files: ['test/**', '**/*.test.ts', 'bench/**', 'web/e2e/**'],
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  upward('db', ['services', 'federation', 'graphql', 'http', 'ws', 'cli', 'jobs']),
  upward('lib', [
    ...['services', 'federation', 'graphql', 'http', 'ws', 'cli', 'jobs', 'db', 'events'],
  ]),
  upward('net', [
    ...['services', 'federation', 'graphql', 'http', 'ws', 'cli', 'jobs', 'db', 'events'],
  ]),
  upward('events', ['services', 'federation', 'graphql', 'http', 'ws', 'cli', 'jobs']),
  upward('services', ['federation', 'graphql', 'http', 'ws', 'cli']),
  // The identity (Actor, sessions), the action catalogue and signatures: below the services,
  // which read them; it carries no data the services read for it.
  upward('auth', [
    ...['services', 'federation', 'graphql', 'http', 'ws', 'cli', 'jobs', 'db', 'events'],
  ]),
  // Relay and host roles: built on the services (sessions, blocks, devices), beside them.
  upward('federation', ['graphql', 'http', 'ws', 'cli', 'jobs']),
  upward('jobs', ['graphql', 'http', 'ws', 'cli']),
  // Backup, restore, move, export and import: below the edges, beside the services.
  upward('data', ['graphql', 'http', 'ws', 'cli']),
  // The edges: resolvers call services and name their view types (src/graphql/mappers.ts), never
  // a table's row type; the WebSocket layer is transport and fan-out, HTTP does not reach into
  // either, and takes views from the services too (the readiness probe still reads db/migrate).
  upward('graphql', ['http', 'ws', 'cli', 'db']),
  upward('ws', ['http', 'cli', 'db']),
  upward('http', ['ws', 'cli', 'db/tables']),
);
