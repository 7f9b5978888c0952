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
        patterns: forbidden.map((layer) => ({
          group: [`**/${layer}/**`, `**/${layer}/*`],
          message: `src/${from} must not import from src/${layer} (layers import one way: edge -> service -> queries -> db)`,
        })),
      },
    ],
  },
});

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
  upward('db', ['services', 'graphql', 'http', 'ws', 'cli', 'jobs']),
  upward('lib', ['services', 'graphql', 'http', 'ws', 'cli', 'jobs', 'db', 'events']),
  upward('events', ['services', 'graphql', 'http', 'ws', 'cli', 'jobs']),
  upward('services', ['graphql', 'http', 'ws', 'cli']),
  upward('auth', ['graphql', 'http', 'ws', 'cli']),
  upward('jobs', ['graphql', 'http', 'ws', 'cli']),
);
