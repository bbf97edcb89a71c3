import { lstat, readFile, readdir } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import yazl from 'yazl';
import { PlatformError } from '../../common/errors.js';
import { MOD_MANIFEST_FILE, parseModManifest, type ModManifest } from './mod-manifest.js';

export interface PackedMod {
  manifest: ModManifest;
  /** The ZIP archive. */
  archive: Buffer;
  /** Archive paths, sorted. */
  files: string[];
}

// A fixed timestamp makes the same sources pack to the same bytes (and the same SHA-256).
const FIXED_MTIME = new Date('2024-01-01T00:00:00Z');
/** Version-control and editor litter is never packed. */
const SKIPPED_NAMES = new Set(['.git', '.hg', '.svn', '.DS_Store', 'Thumbs.db']);

/**
 * Packs a mod directory into a ZIP: every regular file below it (sorted, with `/` separators and
 * fixed timestamps), after validating `tb-mod.json` and checking that its entry exists. A symbolic
 * link or special file refuses the pack: the registry and the installer refuse them anyway.
 */
export async function packModDirectory(directory: string): Promise<PackedMod> {
  let manifestText: string;
  try {
    manifestText = await readFile(join(directory, MOD_MANIFEST_FILE), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT')
      throw new PlatformError('BAD_REQUEST', `${directory} has no ${MOD_MANIFEST_FILE}`);
    throw error;
  }
  const manifest = parseModManifest(manifestText);
  const files = (await listFiles(directory, directory)).sort();
  if (!files.includes(manifest.entry)) {
    throw new PlatformError(
      'BAD_REQUEST',
      `the entry "${manifest.entry}" named in ${MOD_MANIFEST_FILE} is not a file of ${directory}`,
    );
  }
  const zip = new yazl.ZipFile();
  for (const file of files) {
    zip.addBuffer(await readFile(join(directory, ...file.split('/'))), file, { mtime: FIXED_MTIME, mode: 0o100644 });
  }
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
  return { manifest, archive: Buffer.concat(chunks), files };
}

async function listFiles(root: string, directory: string): Promise<string[]> {
  const files: string[] = [];
  for (const entry of await readdir(directory, { withFileTypes: true })) {
    if (SKIPPED_NAMES.has(entry.name)) continue;
    const path = join(directory, entry.name);
    const archivePath = relative(root, path).split(sep).join('/');
    // lstat, not stat: a link is reported, never followed.
    const status = await lstat(path);
    if (status.isSymbolicLink())
      throw new PlatformError('BAD_REQUEST', `${archivePath} is a symbolic link; mods hold regular files only`);
    if (status.isDirectory()) files.push(...(await listFiles(root, path)));
    else if (status.isFile()) files.push(archivePath);
    else throw new PlatformError('BAD_REQUEST', `${archivePath} is not a regular file; mods hold regular files only`);
  }
  return files;
}
