// Lint: the recommended sets plus the type-aware rules that catch lost promises. Layout is Prettier's job
// (eslint-config-prettier turns off every rule that would fight it).
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(
  { ignores: ['dist/', '.old-dist/', 'node_modules/', '.bench-out/', 'data/'] },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    languageOptions: {
      globals: { ...globals.node },
      parserOptions: {
        // Each file is checked with its own tsconfig (the root one, or console/tsconfig.json).
        projectService: { allowDefaultProject: ['*.js', '*.ts', 'scripts/*.mjs'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // A promise nobody awaits loses its rejection (an unhandled rejection ends the process).
      '@typescript-eslint/no-floating-promises': 'error',
      // An async callback where a void one is expected (an event handler, forEach) drops its errors.
      // (An async JSX handler is the console's idiom: each catches its own failures.)
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { attributes: false } }],
      '@typescript-eslint/await-thenable': 'error',
      // Names are checked for control characters on purpose (config/names.ts, hub/requestNames.ts).
      'no-control-regex': 'off',
      // `const { dropped: _, ...rest } = row` is how a field is left out of a copy.
      '@typescript-eslint/no-unused-vars': ['error', { ignoreRestSiblings: true }],
    },
  },
  {
    files: ['console/src/**'],
    languageOptions: { globals: { ...globals.browser } },
  },
  prettier,
);
