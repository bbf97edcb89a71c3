import { coerce, satisfies, valid, validRange } from 'semver';
import { PlatformError, type FieldError } from '../../common/errors.js';
import { isValidPackageName, parseRequirement } from '../../packaging/requirement.js';

/** File name of the manifest at the root of a mod archive. */
export const MOD_MANIFEST_FILE = 'tb-mod.json';

/** `tb-mod.json`, validated and normalised. */
export interface ModManifest {
  /** Registry package name (letters, digits, `.`, `_`, `-`; starts with a letter or digit). */
  name: string;
  /** Exact semver version (`1.2.0`). */
  version: string;
  /** Path of the ES module entry inside the archive (`index.js`, `dist/index.mjs`). */
  entry: string;
  /** Requirement strings (`other-mod>=1.2.0`), the registry's dependency format. */
  dependencies: string[];
  /** Semver range of the host platform versions the mod supports; null means any. */
  toolboxVersion: string | null;
  /** Optional one-line description, used when `tb mods publish` creates the package. */
  description: string | null;
}

const ENTRY_EXTENSIONS = /\.(m?js)$/;

/**
 * Validates a manifest (its JSON text or the parsed value). Every problem is reported at once in
 * one `UNPROCESSABLE_ENTITY` error with field errors, so a mod author fixes the file in one pass.
 */
export function parseModManifest(input: string | unknown): ModManifest {
  let raw: unknown = input;
  if (typeof input === 'string') {
    try {
      raw = JSON.parse(input);
    } catch (error) {
      throw new PlatformError(
        'UNPROCESSABLE_ENTITY',
        `${MOD_MANIFEST_FILE} is not valid JSON: ${(error as Error).message}`,
      );
    }
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new PlatformError('UNPROCESSABLE_ENTITY', `${MOD_MANIFEST_FILE} must hold a JSON object`);
  }
  const fields = raw as Record<string, unknown>;
  const problems: FieldError[] = [];
  const problem = (field: string, message: string) => problems.push({ field, message });

  const name = typeof fields.name === 'string' ? fields.name.trim() : '';
  if (!isValidPackageName(name))
    problem('name', 'must be 1–100 letters, digits, ".", "_" or "-", starting with a letter or digit');

  const version = typeof fields.version === 'string' ? fields.version.trim() : '';
  if (valid(version) === null) problem('version', 'must be an exact semver version such as 1.0.0');

  const entry = typeof fields.entry === 'string' ? fields.entry.trim() : 'index.js';
  const entryProblem = relativePathProblem(entry);
  if (fields.entry !== undefined && typeof fields.entry !== 'string') problem('entry', 'must be a string');
  else if (entryProblem) problem('entry', entryProblem);
  else if (!ENTRY_EXTENSIONS.test(entry)) problem('entry', 'must be an ES module file ending in .js or .mjs');

  const dependencies = parseManifestDependencies(fields.dependencies, problem);

  let toolboxVersion: string | null = null;
  if (fields.toolbox_version !== undefined && fields.toolbox_version !== null) {
    if (typeof fields.toolbox_version !== 'string' || validRange(fields.toolbox_version) === null) {
      problem('toolbox_version', 'must be a semver range such as >=0.1.0 <1');
    } else {
      toolboxVersion = fields.toolbox_version.trim() || null;
    }
  }

  const description = typeof fields.description === 'string' ? fields.description.slice(0, 5000) : null;

  if (problems.length > 0) {
    throw new PlatformError(
      'UNPROCESSABLE_ENTITY',
      `Invalid ${MOD_MANIFEST_FILE}: ${problems.map((entry) => `${entry.field} ${entry.message}`).join('; ')}`,
      problems,
    );
  }
  return {
    name,
    version: valid(version)!,
    entry: entry.replace(/^\.\//, ''),
    dependencies,
    toolboxVersion,
    description,
  };
}

/**
 * Dependencies as an array of requirement strings (`["lib>=1.2.0"]`) or as an object of name to
 * range (`{"lib": "^1.2"}`, the package.json habit); both become requirement strings.
 */
function parseManifestDependencies(value: unknown, problem: (field: string, message: string) => void): string[] {
  if (value === undefined || value === null) return [];
  const inputs: Array<string | { name: string; version?: string }> = [];
  if (Array.isArray(value)) {
    for (const item of value) {
      if (typeof item !== 'string') {
        problem(
          'dependencies',
          `entries must be requirement strings such as "lib>=1.2.0" (got ${JSON.stringify(item)})`,
        );
        return [];
      }
      inputs.push(item);
    }
  } else if (typeof value === 'object') {
    for (const [name, range] of Object.entries(value as Record<string, unknown>)) {
      if (typeof range !== 'string') {
        problem('dependencies', `the range of "${name}" must be a string`);
        return [];
      }
      inputs.push({ name, version: range });
    }
  } else {
    problem('dependencies', 'must be an array of requirement strings or an object of name to version range');
    return [];
  }
  const requirements: string[] = [];
  for (const input of inputs) {
    try {
      const requirement = parseRequirement(input);
      requirements.push(
        requirement.writtenRange ? `${requirement.name}@${requirement.writtenRange}` : requirement.name,
      );
    } catch (error) {
      problem('dependencies', (error as Error).message);
    }
  }
  return requirements;
}

/** Why `path` cannot name a file inside a mod, or null (the ZIP inspector's name rules). */
export function relativePathProblem(path: string): string | null {
  if (path.length === 0) return 'must not be empty';
  if (path.includes('\\')) return 'must use "/" separators';
  if (path.startsWith('/') || /^[A-Za-z]:/.test(path)) return 'must be a path relative to the mod root';
  if (path.split('/').includes('..')) return 'must not contain ".." segments';
  if (/[\u0000-\u001f\u007f]/.test(path)) return 'must not contain control characters';
  return null;
}

/** Whether the mod supports the host platform `hostVersion` (a null range supports every version). */
export function supportsHostVersion(manifest: Pick<ModManifest, 'toolboxVersion'>, hostVersion: string): boolean {
  if (!manifest.toolboxVersion) return true;
  const coerced = valid(hostVersion) ?? coerce(hostVersion)?.version;
  if (!coerced) return true;
  return satisfies(coerced, manifest.toolboxVersion, { includePrerelease: true });
}
