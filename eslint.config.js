import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'data/**', 'coverage/**', 'examples/**/node_modules/**'] },
  js.configs.recommended,
  { files: ['**/*.{js,mjs,cjs}'], languageOptions: { globals: globals.node } },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/consistent-type-imports': 'off',
      'no-control-regex': 'off',
    },
  },
  {
    // The CLI calls the core, never the other way round: shared helpers live in src/common or src/config.
    files: ['src/**/*.ts'],
    ignores: ['src/cli/**', 'src/main.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['**/cli/*'], message: 'Only the CLI (src/cli, src/main.ts) imports from src/cli.' }] }],
    },
  },
  {
    // One CLI style: commands print and read the environment through their CommandIo (src/cli/command-io.ts).
    files: ['src/cli/**/*.ts', 'src/main.ts'],
    ignores: ['src/cli/command-io.ts', 'src/cli/**/*.spec.ts'],
    rules: {
      'no-console': 'error',
      'no-restricted-properties': [
        'error',
        { object: 'process', property: 'stdout', message: 'Print with io.out.' },
        { object: 'process', property: 'stderr', message: 'Print with io.err.' },
        { object: 'process', property: 'env', message: 'Read io.env.' },
      ],
    },
  },
);
