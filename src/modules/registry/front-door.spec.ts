import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

// The lint rule that keeps the registry behind its index.ts, run the way `npx eslint .` runs it: each case lints
// a small source as if it were saved at the given path.
const root = fileURLToPath(new URL('../../../', import.meta.url));
const eslintBin = fileURLToPath(new URL('../../../node_modules/eslint/bin/eslint.js', import.meta.url));

interface LintMessage {
  ruleId: string | null;
  message: string;
}

function lint(path: string, source: string): LintMessage[] {
  let output: string;
  try {
    output = execFileSync(process.execPath, [eslintBin, '--format', 'json', '--stdin', '--stdin-filename', path], {
      cwd: root,
      input: source,
      encoding: 'utf8',
    });
  } catch (error) {
    // ESLint exits 1 when it reports an error; the report is still on stdout.
    output = (error as { stdout: string }).stdout;
  }
  const [result] = JSON.parse(output) as { messages: LintMessage[] }[];
  return result.messages;
}

const boundaryErrors = (messages: LintMessage[]) =>
  messages.filter((m) => m.ruleId === 'boundaries/dependencies').map((m) => m.message);

describe('the registry front door (lint)', () => {
  it('refuses a feature module importing an inner registry file', () => {
    const messages = lint(
      'src/modules/search/front-door-probe.ts',
      "import { PackagesService } from '../registry/packages.service.js';\nexport const probe = PackagesService;\n",
    );
    expect(boundaryErrors(messages)).toEqual([
      'Import the registry through src/modules/registry/index.ts, not its inner files.',
    ]);
  });

  it('refuses a type-only import of an inner registry file', () => {
    const messages = lint(
      'src/modules/diff/front-door-probe.ts',
      "import type { Caller } from '../registry/caller.js';\nexport const probe = (caller: Caller) => caller;\n",
    );
    expect(boundaryErrors(messages)).toHaveLength(1);
  });

  it('refuses an app or the CLI importing an inner registry file', () => {
    const source =
      "import { RegistryModule } from '../modules/registry/registry.module.js';\nexport const probe = RegistryModule;\n";
    expect(boundaryErrors(lint('src/apps/front-door-probe.ts', source))).toHaveLength(1);
    expect(boundaryErrors(lint('src/cli/front-door-probe.ts', source))).toHaveLength(1);
  });

  it('accepts imports through the index, and the registry importing its own files', () => {
    expect(
      boundaryErrors(
        lint(
          'src/modules/search/front-door-probe.ts',
          "import { PackagesService, type Caller } from '../registry/index.js';\nexport const probe = (caller: Caller) => [caller, PackagesService];\n",
        ),
      ),
    ).toEqual([]);
    expect(
      boundaryErrors(
        lint(
          'src/modules/registry/front-door-probe.ts',
          "import { PackagesService } from './packages.service.js';\nexport const probe = PackagesService;\n",
        ),
      ),
    ).toEqual([]);
  });
});
