// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'data/**',
      'coverage/**',
      'test/support/api-types.d.ts',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true }],
      '@typescript-eslint/no-unnecessary-condition': 'off',
    },
  },
  {
    // The local chain is test mode's stand-in for a cluster: only the CLI (which starts it in
    // test mode) and the tests reach it, never a production path (ARCHITECTURE.md). src/core's
    // own rule below replaces this one there; test/architecture.test.ts checks both.
    files: ['src/**/*.ts'],
    ignores: ['src/cli/**', 'src/local-chain/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '(^|/)local-chain(/|$)',
              message: 'Only src/cli (test mode) and the tests import src/local-chain.',
            },
          ],
        },
      ],
    },
  },
  {
    // The pure core: no I/O and no reach into the outer layers (ARCHITECTURE.md, invariants).
    files: ['src/core/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(?!zod$|decimal\\.js$|\\.{1,2}/)',
              message: 'src/core imports nothing but zod, decimal.js and its own modules.',
            },
          ],
        },
      ],
    },
  },
  {
    // The store port (src/store/port): only the store reaches its operations' modules, so
    // every call into state goes through the port's named operations (ARCHITECTURE.md).
    files: ['src/**/*.ts'],
    ignores: ['src/store/**/*.ts', 'src/core/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '/store/ops/',
              message: 'Only src/store imports src/store/ops; use the port (store/store.js).',
            },
          ],
        },
      ],
    },
  },
  {
    // Plain Node scripts outside the TypeScript project (scripts/ runs before any build).
    files: ['eslint.config.js', 'scripts/**/*.mjs'],
    extends: [tseslint.configs.disableTypeChecked],
  },
);
