import { migrationClassName, registerMigration, withTypeOnlyImport } from './register-migrations.js';

const INDEX = `import { First1 } from './1-first.js';
import { Second2 } from './2-second.js';

/** Applied in order. */
export const MIGRATIONS = [
  First1, Second2,
];
`;

const GENERATED = `import { MigrationInterface, QueryRunner } from "typeorm";

export class AddWidgets1795000000000 implements MigrationInterface {
    name = 'AddWidgets1795000000000'
}
`;

describe('migration registration', () => {
  it('imports and appends a new migration to MIGRATIONS', () => {
    expect(registerMigration(INDEX, '1795000000000-add-widgets', 'AddWidgets1795000000000'))
      .toBe(`import { First1 } from './1-first.js';
import { Second2 } from './2-second.js';
import { AddWidgets1795000000000 } from './1795000000000-add-widgets.js';

/** Applied in order. */
export const MIGRATIONS = [
  First1, Second2,
  AddWidgets1795000000000,
];
`);
  });

  it('leaves an index that already lists the file unchanged', () => {
    expect(registerMigration(INDEX, '2-second', 'Second2')).toBe(INDEX);
  });

  it('adds the comma a list without a trailing one needs', () => {
    expect(
      registerMigration("import { A1 } from './1-a.js';\nexport const MIGRATIONS = [A1];\n", '2-b', 'B2'),
    ).toContain('export const MIGRATIONS = [A1,\n  B2,\n];');
  });

  it('makes the CLI template import of the two interfaces type-only', () => {
    expect(withTypeOnlyImport(GENERATED).split('\n')[0]).toBe(
      "import type { MigrationInterface, QueryRunner } from 'typeorm';",
    );
  });

  it('reads the migration class name', () => {
    expect(migrationClassName(GENERATED)).toBe('AddWidgets1795000000000');
  });
});
