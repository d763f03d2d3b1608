// @ts-check
// ESLint flat config: typed linting of lib/, test/, bench/, support/ and sample-app/ (`npm run lint`).
// Formatting is Prettier's job (`npm run format`); no rule here checks layout.
import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import jest from 'eslint-plugin-jest';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default defineConfig(
  globalIgnores([
    '**/dist/',
    '**/node_modules/',
    'coverage/',
    'docs/api/',
    'bench/results/',
    'test/package/scaffolds/',
    // The Prisma client the outbox adapters test generates.
    'test/outbox/prisma/generated/',
  ]),

  js.configs.recommended,

  {
    name: 'ackq/typescript',
    files: ['**/*.ts'],
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: {
        // One program for every file: the root tsconfig includes lib, test, bench, support and sample-app and
        // maps `nestjs-redis-ack-queue` to lib/, so linting needs no build. (projectService would pick
        // sample-app/tsconfig.json, which resolves the package through dist/.)
        project: './tsconfig.json',
        tsconfigRootDir: import.meta.dirname,
        // Nest's constructor injection reads decorator metadata. With these (tsconfig.json has both),
        // consistent-type-imports leaves files with decorators alone, so an injected class is never
        // turned into an `import type` (which would make its metadata `Object` and break injection).
        // Typed linting reads them from tsconfig.json; stated here too for untyped runs.
        emitDecoratorMetadata: true,
        experimentalDecorators: true,
      },
    },
    rules: {
      // Promises: every one awaited, returned, or explicitly discarded with `void`.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      // `import type { A }` when all names are types, `import { type A, b }` when mixed (the code's habit
      // today; isolatedModules needs the marker to drop type-only imports).
      '@typescript-eslint/consistent-type-imports': [
        'error',
        { prefer: 'type-imports', fixStyle: 'inline-type-imports', disallowTypeAnnotations: true },
      ],
      '@typescript-eslint/no-import-type-side-effects': 'error',
      // A leading underscore marks a name unused on purpose (`_payload`, `{ consumers: _consumers, ...rest }`).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
    },
  },

  {
    // Test files only (*.spec, *.int-spec, *.e2e-spec, *.fault-spec): test/support/ holds helpers, one of
    // which skips on purpose (singleServerOnly on the cluster project).
    name: 'ackq/tests',
    files: ['test/**/*spec.ts'],
    plugins: { jest },
    rules: {
      'jest/no-focused-tests': 'error',
      'jest/no-disabled-tests': 'error',
      'jest/no-identical-title': 'error',
      'jest/valid-expect': 'error',
    },
  },

  {
    // Plain JavaScript (jest.config.js, the consumer process the fault tests spawn, this file):
    // no tsconfig covers it, so no typed rules.
    name: 'ackq/javascript',
    files: ['**/*.{js,cjs,mjs}'],
    languageOptions: { globals: { ...globals.node } },
  },
  {
    // The packed-package smoke app is compiled twice (as ESM and as CommonJS) against the tarball,
    // outside tsconfig.json: linted without type information.
    name: 'ackq/package-app',
    files: ['test/package/app/**/*.ts'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { parserOptions: { project: false, projectService: false } },
  },
  {
    name: 'ackq/commonjs',
    files: ['**/*.{js,cjs}'],
    languageOptions: { sourceType: 'commonjs' },
  },
  {
    // The dashboard's page scripts: ES modules that run in the browser (shipped as they are, no build).
    name: 'ackq/dashboard-assets',
    files: ['lib/dashboard/assets/**/*.js'],
    languageOptions: { sourceType: 'module', globals: { ...globals.browser } },
  },
);
