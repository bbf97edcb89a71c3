import { Range, minVersion, valid, validRange } from 'semver';
import { PlatformError } from '../common/errors.js';

/**
 * One dependency requirement: a package name and the versions it accepts.
 *
 * Written forms accepted (npm semver syntax plus the pip-style forms clients already send):
 * `CloudM>=2.0.0`, `lib^1.2`, `x==1.0.0`, `y`, `name@^1.0.0`, `name ~1.4`, `a>=1.0,<2.0`,
 * `a 1.0.0 - 2.0.0`, `a >=1 <2 || >=3`, `a!=1.5.0`, `a~=1.4`, or `{ name, version }`.
 */
export interface Requirement {
  name: string;
  /** Normalized npm semver range (`*` for any version). */
  range: string;
  /** The requirement as written (trimmed); `name@version` for the object form, so it parses back. */
  raw: string;
  /** The range as the requester wrote it (`^2`, `>=1.0,<2.0`); empty for any version. Used in messages. */
  writtenRange: string;
  /** Set for `==` / `=` pins and a bare full version: the one version this requirement accepts. */
  exact?: string;
}

export type RequirementInput = string | { name: string; version?: string | null };

export const PACKAGE_NAME_MAX_LENGTH = 100;
// Long enough for any honest range; bounds the work done on hostile input.
const REQUIREMENT_MAX_LENGTH = 1000;

const PACKAGE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const LEADING_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*/;
// Characters that may start a range glued to the name (`lib^1.2`, `CloudM>=2.0.0`, `lib*`).
const RANGE_START = /^[\^~<>=!*]/;
const PARTIAL_VERSION = /^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/;
const FULL_VERSION_START = /^v?\d+\.\d+\.\d+/;
const WILDCARD_PART = /(^|\.)[xX*](\.|$)/;

export function isValidPackageName(name: string): boolean {
  return name.length >= 1 && name.length <= PACKAGE_NAME_MAX_LENGTH && PACKAGE_NAME.test(name);
}

export function parseRequirement(input: RequirementInput): Requirement {
  if (typeof input === 'string') return parseRequirementString(input);
  if (input === null || typeof input !== 'object' || typeof input.name !== 'string') {
    throw invalid(String(input), 'expected a string or an object with a name');
  }
  const name = input.name.trim();
  const version = input.version ?? '';
  if (typeof version !== 'string') throw invalid(name, 'version must be a string');
  const writtenRange = version.trim();
  const raw = writtenRange ? `${name}@${writtenRange}` : name;
  checkName(name, raw);
  return { name, raw, writtenRange, ...normalizeRangeFor(writtenRange, raw) };
}

function parseRequirementString(input: string): Requirement {
  const raw = input.trim();
  if (!raw) throw invalid(raw, 'empty requirement');
  if (raw.length > REQUIREMENT_MAX_LENGTH) {
    throw invalid(`${raw.slice(0, 40)}…`, `longer than ${REQUIREMENT_MAX_LENGTH} characters`);
  }
  const name = LEADING_NAME.exec(raw)?.[0];
  if (!name) throw invalid(raw, 'a package name must start with a letter or digit');
  checkName(name, raw);

  let rest = raw.slice(name.length);
  if (rest.startsWith('@')) {
    rest = rest.slice(1);
    if (!rest.trim()) throw invalid(raw, 'missing version range after "@"');
  } else if (rest && !/^\s/.test(rest) && !RANGE_START.test(rest) && !rest.startsWith('(')) {
    throw invalid(raw, `unexpected character "${rest[0]}" after package name "${name}"`);
  }
  let writtenRange = rest.trim();
  // pip also writes `name (>=1.0)`.
  if (writtenRange.startsWith('(') && writtenRange.endsWith(')')) writtenRange = writtenRange.slice(1, -1).trim();
  return { name, raw, writtenRange, ...normalizeRangeFor(writtenRange, raw) };
}

function checkName(name: string, raw: string): void {
  if (!name) throw invalid(raw, 'missing package name');
  if (name.length > PACKAGE_NAME_MAX_LENGTH) {
    throw invalid(raw, `package name longer than ${PACKAGE_NAME_MAX_LENGTH} characters`);
  }
  if (!PACKAGE_NAME.test(name)) {
    throw invalid(raw, 'a package name holds letters, digits, ".", "_" and "-", starting with a letter or digit');
  }
}

function invalid(raw: string, reason: string): PlatformError {
  return new PlatformError('BAD_REQUEST', `Invalid requirement "${raw}": ${reason}`);
}

function normalizeRangeFor(writtenRange: string, raw: string): { range: string; exact?: string } {
  try {
    return translateRange(writtenRange);
  } catch (error) {
    if (error instanceof RangeSyntaxError) throw invalid(raw, error.message);
    throw error;
  }
}

class RangeSyntaxError extends Error {}

/**
 * Turns a written range (npm syntax, comma sets, `==`, `!=`, `~=`) into a normalized npm range,
 * e.g. to validate a version's `toolbox_version` at upload. Throws BAD_REQUEST naming the range.
 */
export function normalizeRange(written: string): { range: string; exact?: string } {
  try {
    return translateRange(written);
  } catch (error) {
    if (error instanceof RangeSyntaxError) {
      throw new PlatformError('BAD_REQUEST', `Invalid version range "${written.trim()}": ${error.message}`);
    }
    throw error;
  }
}

function translateRange(written: string): { range: string; exact?: string } {
  const text = written.trim();
  if (text === '' || text === '*' || text.toLowerCase() === 'latest') return { range: '*' };

  const alternatives = text.split('||').map((alternative) => alternative.trim());
  const translated: string[] = [];
  let exact: string | undefined;
  for (const alternative of alternatives) {
    if (!alternative) throw new RangeSyntaxError('empty alternative around "||"');
    const parts = alternative.includes(',') ? alternative.split(',').map((part) => part.trim()) : [alternative];
    const kept: string[] = [];
    const excluded: string[] = [];
    for (const part of parts) {
      if (!part) throw new RangeSyntaxError('empty comparator in a comma-separated set');
      if (part.startsWith('!=')) excluded.push(fullVersion(part.slice(2), part));
      else kept.push(translateComparator(part));
    }
    // `!=v` has no npm spelling: split the set into the part below v and the part above it.
    let sets = [kept.join(' ')];
    for (const version of excluded) {
      sets = sets.flatMap((set) => [`${set} <${version}`.trim(), `${set} >${version}`.trim()]);
    }
    translated.push(...sets);
    if (alternatives.length === 1 && parts.length === 1 && excluded.length === 0) exact = exactPin(parts[0]);
  }

  const joined = translated.map((set) => set || '*').join(' || ');
  const range = validRange(joined);
  if (range === null) throw new RangeSyntaxError(`"${text}" is not a valid version range`);
  let lowest: unknown = null;
  try {
    lowest = minVersion(range);
  } catch {
    lowest = null;
  }
  if (lowest === null) throw new RangeSyntaxError(`"${text}" matches no version`);
  return exact ? { range, exact } : { range };
}

function translateComparator(part: string): string {
  if (part.startsWith('===')) return `=${fullVersion(part.slice(3), part)}`;
  if (part.startsWith('==')) {
    const version = part.slice(2).trim();
    // `==1.0.*` is pip's wildcard match: the same as npm's x-range.
    if (WILDCARD_PART.test(version)) return version;
    return `=${fullVersion(version, part)}`;
  }
  if (part.startsWith('~=')) return compatibleRelease(part.slice(2).trim(), part);
  return part;
}

/** pip's `~=1.4.2` is `>=1.4.2 <1.5.0`; `~=1.4` is `>=1.4 <2.0`. */
function compatibleRelease(version: string, part: string): string {
  const match = PARTIAL_VERSION.exec(version);
  if (!match || match[2] === undefined) throw new RangeSyntaxError(`"${part}" needs at least major.minor`);
  const [major, minor, patch] = [Number(match[1]), Number(match[2]), match[3]];
  const lower = fullVersion(version, part);
  const upper = patch === undefined ? `${major + 1}.0.0-0` : `${major}.${minor + 1}.0-0`;
  return `>=${lower} <${upper}`;
}

/** Pads `1.0` to `1.0.0`: pins are exact, so a partial version means its zero-padded form (pip semantics). */
function fullVersion(text: string, part: string): string {
  const match = PARTIAL_VERSION.exec(text.trim());
  if (!match) throw new RangeSyntaxError(`"${part}" does not name a version`);
  const [, major, minor = '0', patch = '0', prerelease = '', build = ''] = match;
  const version = valid(`${major}.${minor}.${patch}${prerelease}${build}`);
  if (!version) throw new RangeSyntaxError(`"${part}" does not name a version`);
  return version;
}

function exactPin(part: string): string | undefined {
  if (part.startsWith('==') || part.startsWith('===')) {
    const version = part.replace(/^===?/, '').trim();
    return WILDCARD_PART.test(version) ? undefined : fullVersion(version, part);
  }
  // npm's `=1.0` and a bare `1.0` are x-ranges; only a full version is a pin.
  const version = part.startsWith('=') ? part.slice(1).trim() : part;
  // semver's valid() throws and catches internally on a miss, which is slow on this hot path.
  if (!FULL_VERSION_START.test(version)) return undefined;
  return valid(version) ?? undefined;
}

/**
 * Whether the range names a prerelease (`>=2.0.0-beta`, `^1.0.0-0`), which opts its package into prereleases.
 * The `<x.y.z-0` upper bounds that semver itself writes for `^` and `~` do not count.
 */
export function isPrereleaseRange(range: string): boolean {
  let parsed: Range;
  try {
    parsed = new Range(normalizeRange(range).range);
  } catch {
    return false;
  }
  return parsed.set.some((comparators) =>
    comparators.some((comparator) => {
      const prerelease = typeof comparator.semver === 'object' ? comparator.semver.prerelease : [];
      if (prerelease.length === 0) return false;
      const isGeneratedUpperBound = comparator.operator === '<' && prerelease.length === 1 && prerelease[0] === 0;
      return !isGeneratedUpperBound;
    }),
  );
}

/** `1.5` → `1.5.0`; throws BAD_REQUEST for anything that is not a version. */
export function normalizeHostVersion(hostVersion: string): string {
  const text = String(hostVersion).trim();
  try {
    return fullVersion(text, text);
  } catch {
    throw new PlatformError('BAD_REQUEST', `Invalid toolbox_version "${text}": expected a version such as 1.5.0`);
  }
}

/**
 * Whether a version's `toolbox_version` range admits the host version. Null or empty means any host.
 * A host prerelease (`2.0.0-beta`) satisfies `>=1.0.0`: the range describes the host API, not a release channel.
 * An unparseable stored range admits nothing (upload validation should have refused it).
 */
export function satisfiesHost(toolboxRange: string | null | undefined, hostVersion: string): boolean {
  if (toolboxRange === null || toolboxRange === undefined || toolboxRange.trim() === '') return true;
  let host: string;
  let range: string;
  try {
    host = normalizeHostVersion(hostVersion);
    range = normalizeRange(toolboxRange).range;
  } catch {
    return false;
  }
  return new Range(range, { includePrerelease: true }).test(host);
}
