import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * Run after `npm run migration:create|generate` (their `post` scripts): the TypeORM CLI writes a
 * migration file, but this project lists its migrations in `migrations/index.ts` and compiles with
 * `verbatimModuleSyntax`, where the CLI's `import { MigrationInterface, QueryRunner }` of two types
 * does not compile. Each migration file not yet in the index gets a type-only import and an entry.
 */

const TYPEORM_TYPE_IMPORT = /^import \{ MigrationInterface, QueryRunner \} from ["']typeorm["'];?$/m;

/** The CLI template's value import of the two interfaces, as a type-only import. */
export function withTypeOnlyImport(source: string): string {
  return source.replace(TYPEORM_TYPE_IMPORT, "import type { MigrationInterface, QueryRunner } from 'typeorm';");
}

/** The exported migration class of a migration file, or undefined. */
export function migrationClassName(source: string): string | undefined {
  return /^export class (\w+) implements MigrationInterface/m.exec(source)?.[1];
}

/**
 * `indexSource` with `className` (from `./{fileBase}.js`) imported and appended to `MIGRATIONS`;
 * unchanged when already listed.
 */
export function registerMigration(indexSource: string, fileBase: string, className: string): string {
  if (indexSource.includes(`'./${fileBase}.js'`)) return indexSource;
  const imports = [...indexSource.matchAll(/^import .*;$/gm)];
  const afterImports = imports.length === 0 ? 0 : imports.at(-1)!.index! + imports.at(-1)![0].length;
  const withImport = `${indexSource.slice(0, afterImports)}\nimport { ${className} } from './${fileBase}.js';${indexSource.slice(afterImports)}`;
  const list = /export const MIGRATIONS = \[([\s\S]*?)\];/.exec(withImport);
  if (!list) throw new Error('migrations/index.ts has no `export const MIGRATIONS = [...]` list');
  const items = list[1].trimEnd();
  const entries = items.length === 0 ? `\n  ${className},\n` : `${items.replace(/,?$/, ',')}\n  ${className},\n`;
  return withImport.replace(list[0], `export const MIGRATIONS = [${entries}];`);
}

/** Registers every migration file of `directory` that `index.ts` does not list yet; returns their class names. */
export async function registerMigrations(directory: string): Promise<string[]> {
  const indexPath = join(directory, 'index.ts');
  let index = await readFile(indexPath, 'utf8');
  const added: string[] = [];
  for (const file of (await readdir(directory)).filter((name) => /^\d+-.+\.ts$/.test(name)).sort()) {
    const fileBase = file.replace(/\.ts$/, '');
    if (index.includes(`'./${fileBase}.js'`)) continue;
    const path = join(directory, file);
    const source = await readFile(path, 'utf8');
    const className = migrationClassName(source);
    if (!className) continue;
    const fixed = withTypeOnlyImport(source);
    if (fixed !== source) await writeFile(path, fixed);
    index = registerMigration(index, fileBase, className);
    added.push(className);
  }
  if (added.length > 0) await writeFile(indexPath, index);
  return added;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const directory = resolve(process.argv[2] ?? 'src/database/migrations');
  const added = await registerMigrations(directory);
  console.log(
    added.length === 0
      ? 'no new migration to register'
      : `registered in ${join(directory, 'index.ts')}: ${added.join(', ')}`,
  );
}
