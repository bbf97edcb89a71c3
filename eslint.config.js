import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';
import boundaries from 'eslint-plugin-boundaries';
import { fileURLToPath } from 'node:url';

const resolver = fileURLToPath(new URL('./tools/eslint/nodenext-resolver.cjs', import.meta.url));

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'data/**', 'coverage/**', 'examples/**/node_modules/**'] },
  js.configs.recommended,
  { files: ['**/*.{js,mjs,cjs}'], languageOptions: { globals: globals.node } },
  // The pages' scripts run in the browser as ES modules, served as written (no build step).
  { files: ['web/**/*.js'], languageOptions: { globals: globals.browser, sourceType: 'module' } },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      '@typescript-eslint/consistent-type-imports': 'off',
      'no-control-regex': 'off',
    },
  },
  {
    // Module boundaries (docs/architecture.md): infrastructure never imports features, apps or the CLI; a feature
    // module reads another module's data through that module's exported services and repositories, never its entities.
    files: ['src/**/*.ts'],
    plugins: { boundaries },
    settings: {
      'import/resolver': { [resolver]: {} },
      'boundaries/include': ['src/**/*.ts', 'test/**/*.ts'],
      'boundaries/elements': [
        { type: 'cli', pattern: 'src/cli' },
        { type: 'app', pattern: 'src/apps' },
        { type: 'migrations', pattern: 'src/database/migrations' },
        { type: 'module', pattern: 'src/modules/*', capture: ['name'] },
        { type: 'infra', pattern: 'src/*', capture: ['name'] },
        { type: 'test', pattern: 'test' },
      ],
    },
    rules: {
      'boundaries/dependencies': [
        'error',
        {
          default: 'disallow',
          policies: [
            {
              from: { element: { type: 'cli' } },
              allow: { to: { element: { types: { anyOf: ['app', 'module', 'infra', 'migrations'] } } } },
            },
            {
              from: { element: { type: 'app' } },
              allow: { to: { element: { types: { anyOf: ['module', 'infra'] } } } },
            },
            {
              from: { element: { type: 'module' } },
              allow: { to: { element: { types: { anyOf: ['module', 'infra'] } } } },
            },
            // The data source lists the migrations; nothing in infrastructure knows a feature.
            {
              from: { element: { type: 'infra' } },
              allow: { to: { element: { types: { anyOf: ['infra', 'migrations'] } } } },
            },
            { from: { element: { type: 'migrations' } }, allow: { to: { element: { type: 'infra' } } } },
            // Another module's entities are its tables: outside entity files (relations) only types may name them.
            {
              from: { element: { type: 'module', fileInternalPath: '!entities/**' } },
              disallow: {
                to: { element: { type: 'module', fileInternalPath: 'entities/**' } },
                dependency: { kind: 'value' },
              },
            },
            // The registry has one front door: other modules, the apps and the CLI import it through its index.ts.
            {
              from: { element: { types: { anyOf: ['module', 'app', 'cli'] } } },
              disallow: {
                to: { element: { type: 'module', captured: { name: 'registry' }, fileInternalPath: '!index.ts' } },
              },
              message: 'Import the registry through src/modules/registry/index.ts, not its inner files.',
            },
          ],
        },
      ],
    },
  },
  {
    // The two composition points: `tb` dispatches to the CLI, and the data source lists every module's entities.
    files: ['src/main.ts', 'src/database/entities.ts'],
    rules: { 'boundaries/dependencies': 'off' },
  },
  {
    // Specs test one piece with whatever builds its inputs: fixtures under test/, an app around a module.
    files: ['src/**/*.spec.ts'],
    rules: { 'boundaries/dependencies': 'off' },
  },
  {
    // The CLI calls the core, never the other way round: shared helpers live in src/common or src/config.
    files: ['src/**/*.ts'],
    ignores: ['src/cli/**', 'src/main.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['**/cli/*'], message: 'Only the CLI (src/cli, src/main.ts) imports from src/cli.' }] },
      ],
    },
  },
  {
    // The configuration (src/config) is the one reader of the environment: it validates every variable at start-up
    // and lists each problem, and the README documents each. Elsewhere a setting arrives through PlatformConfig.
    // The CLI reads it through its CommandIo (the block below restates this rule for src/cli with its own message).
    files: ['src/**/*.ts'],
    ignores: ['src/config/**', 'src/**/*.spec.ts', 'src/cli/command-io.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        {
          object: 'process',
          property: 'env',
          message: 'Read settings from the configuration (src/config/config.ts), not from process.env.',
        },
      ],
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
  { files: ['**/*.cjs'], rules: { '@typescript-eslint/no-require-imports': 'off' } },
);
