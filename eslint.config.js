// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: ['dist/**', 'node_modules/**', 'data/**', 'coverage/**', 'src/client/api-types.ts'],
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
    // No module-level mutable state in the store (ARCHITECTURE.md): what a store remembers (the
    // authorize engine's known state and hints, a policy cache) lives in objects its opener
    // makes, so two stores in one process never share it and a new store starts empty. A
    // constant set or map is typed Readonly*; a state that is the process's own by nature says
    // why beside the line that disables this rule.
    files: ['src/store/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector:
            ":matches(Program, ExportNamedDeclaration) > VariableDeclaration[kind!='const']",
          message: 'No module-level let or var in src/store: keep state in the store that owns it.',
        },
        {
          selector:
            ':matches(Program, ExportNamedDeclaration) > VariableDeclaration > VariableDeclarator:not([id.typeAnnotation.typeAnnotation.typeName.name=/^Readonly/]) > NewExpression.init[callee.name=/^(Map|Set|WeakMap|WeakSet|RecentMap)$/]',
          message:
            'No module-level Map, Set, WeakMap or RecentMap in src/store: keep state in the store that owns it (a constant one is typed Readonly*).',
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
