import { constants } from 'node:fs';
import { lstat, mkdir, open, realpath, rm } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { pipeline } from 'node:stream/promises';
import yauzl from 'yauzl';
import type { Entry, ZipFile } from 'yauzl';
import { PlatformError } from '../../common/errors.js';
import { ZipInspector, type ZipLimits } from '../../packaging/zip-inspector.js';
import { relativePathProblem } from './mod-manifest.js';

export interface ExtractionSummary {
  files: number;
  directories: number;
  bytes: number;
}

const UNIX_TYPE_MASK = 0o170000;
const UNIX_SYMLINK = 0o120000;
const UNIX_DIRECTORY = 0o040000;
const UNIX_REGULAR = 0o100000;
// O_NOFOLLOW is absent on Windows, where the exclusive create already refuses an existing path.
const CREATE_NEW_FILE = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0);

function reject(message: string): PlatformError {
  return new PlatformError('ZIP_REJECTED', message);
}

/**
 * Extracts a mod archive into `targetDirectory`, which must not exist yet (it is created here).
 *
 * The archive first passes the registry's own upload check (`ZipInspector`: names, types, sizes,
 * CRCs, bombs), so an archive the registry would refuse is refused here before a byte is written.
 * Extraction then re-checks every entry on its own terms, because the file on disk is what is
 * trusted, not the check: links are neither followed nor created (files are opened with
 * O_CREAT|O_EXCL|O_NOFOLLOW, directories are created one segment at a time and checked with lstat),
 * every path must resolve inside the target, archive permissions are ignored (0644 files, 0755
 * directories). On any failure the target directory is removed, so nothing half-extracted remains.
 */
export async function extractArchiveSafely(
  zipPath: string,
  targetDirectory: string,
  limits: Partial<ZipLimits> = {},
): Promise<ExtractionSummary> {
  await new ZipInspector(limits).inspect(zipPath);
  await mkdir(targetDirectory, { mode: 0o755 });
  try {
    const root = await realpath(targetDirectory);
    return await extractInto(zipPath, root);
  } catch (error) {
    await rm(targetDirectory, { recursive: true, force: true });
    throw error;
  }
}

async function extractInto(zipPath: string, root: string): Promise<ExtractionSummary> {
  const zipfile = await yauzl.openPromise(zipPath, {
    lazyEntries: true,
    decodeStrings: true,
    validateEntrySizes: true,
    strictFileNames: true,
    autoClose: false,
  });
  const summary: ExtractionSummary = { files: 0, directories: 0, bytes: 0 };
  try {
    for await (const entry of zipfile.eachEntry()) {
      const relativePath = checkedRelativePath(entry, root);
      if (entry.fileName.endsWith('/')) {
        await makeDirectories(root, relativePath);
        summary.directories++;
      } else {
        summary.bytes += await writeFile(zipfile, entry, root, relativePath);
        summary.files++;
      }
    }
  } finally {
    zipfile.close();
  }
  return summary;
}

/** The entry's path relative to `root`, after checking its name and type once more. */
function checkedRelativePath(entry: Entry, root: string): string {
  const name = entry.fileName;
  const label = `ZIP entry ${JSON.stringify(name)}`;
  const nameProblem = relativePathProblem(name);
  if (nameProblem !== null) throw reject(`${label} ${nameProblem}`);
  const unixType = (entry.externalFileAttributes >>> 16) & UNIX_TYPE_MASK;
  if (unixType === UNIX_SYMLINK) throw reject(`${label} is a symbolic link`);
  if (unixType !== 0 && unixType !== UNIX_REGULAR && unixType !== UNIX_DIRECTORY)
    throw reject(`${label} is not a regular file or directory`);
  const destination = resolve(root, name);
  const relativePath = relative(root, destination);
  if (relativePath === '' && name.endsWith('/')) return '';
  if (relativePath === '' || relativePath.startsWith(`..${sep}`) || relativePath === '..' || isAbsolute(relativePath)) {
    throw reject(`${label} would be written outside the target directory`);
  }
  return relativePath;
}

/** Creates each missing segment below `root`; an existing segment must be a real directory, never a link. */
async function makeDirectories(root: string, relativePath: string): Promise<string> {
  let current = root;
  for (const segment of relativePath.split(sep).filter((part) => part !== '' && part !== '.')) {
    current = join(current, segment);
    try {
      await mkdir(current, { mode: 0o755 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const existing = await lstat(current);
      if (!existing.isDirectory())
        throw reject(
          `ZIP path ${JSON.stringify(relativePath)} passes through ${JSON.stringify(relative(root, current))}, which is not a directory`,
        );
    }
  }
  return current;
}

async function writeFile(zipfile: ZipFile, entry: Entry, root: string, relativePath: string): Promise<number> {
  const parts = relativePath.split(sep);
  const parent = await makeDirectories(root, parts.slice(0, -1).join(sep));
  const destination = join(parent, parts[parts.length - 1]);
  let handle;
  try {
    handle = await open(destination, CREATE_NEW_FILE, 0o644);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST' || code === 'ELOOP')
      throw reject(`ZIP entry ${JSON.stringify(entry.fileName)} would overwrite an existing path`);
    throw error;
  }
  let source;
  try {
    source = await zipfile.openReadStreamPromise(entry);
  } catch (error) {
    await handle.close();
    throw error;
  }
  // The write stream owns the handle from here and closes it when the pipeline ends or fails.
  await pipeline(source, handle.createWriteStream());
  return entry.uncompressedSize;
}
