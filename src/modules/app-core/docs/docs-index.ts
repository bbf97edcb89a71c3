import { createHash } from 'node:crypto';
import type { Dirent } from 'node:fs';
import { readFile, readdir, stat } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { writeFileAtomically } from '../../../common/atomic-write.js';
import { languageOf, parseCode, type CodeElement } from './code-parser.js';
import { SearchIndex } from './docs-search.js';
import { parseMarkdown, type MarkdownSection } from './markdown-parser.js';

export interface DocsIndexOptions {
  /** Markdown files are indexed from here (and written here by the docs writer). */
  docsRoot: string;
  /** Code files (TS/JS/Python) are indexed from here. */
  sourceRoots: string[];
  /** Where the index is persisted (`<dataDir>/docs-index.json`). */
  indexPath: string;
  /** Paths in the index are relative to this directory (default: the working directory). */
  baseDir?: string;
}

interface FileRecord {
  hash: string;
  size: number;
  mtime_ms: number;
  kind: 'markdown' | 'code';
  sections: MarkdownSection[];
  elements: CodeElement[];
}

interface StoredIndex {
  version: number;
  built_at: string;
  files: Record<string, FileRecord>;
}

export interface RefreshReport {
  files_parsed: number;
  files_unchanged: number;
  files_removed: number;
}

const INDEX_VERSION = 1;
const SKIPPED_DIRECTORIES = new Set(['node_modules', 'dist', 'coverage', 'build', '__pycache__', 'data']);
const TEST_FILE = /\.(spec|test|e2e-spec)\.[cm]?[jt]sx?$|(^|\/)test_[^/]*\.py$/;

/**
 * The docs index: Markdown sections and code elements per file, persisted as JSON and refreshed
 * incrementally (a file whose size and mtime, or else whose SHA-256, is unchanged is not re-parsed).
 */
export class DocsIndex {
  private files = new Map<string, FileRecord>();
  private sectionCache: MarkdownSection[] | undefined;
  private elementCache: CodeElement[] | undefined;
  private sectionSearchCache: SearchIndex<MarkdownSection> | undefined;
  private elementSearchCache: SearchIndex<CodeElement> | undefined;
  /** True once the index was loaded from disk or built. */
  ready = false;
  readonly baseDir: string;
  readonly docsRoot: string;

  constructor(private readonly options: DocsIndexOptions) {
    this.baseDir = resolve(options.baseDir ?? process.cwd());
    this.docsRoot = resolve(options.docsRoot);
  }

  /** Loads the persisted index; false when there is none (or it is unreadable or of another version). */
  async load(): Promise<boolean> {
    try {
      const stored = JSON.parse(await readFile(this.options.indexPath, 'utf8')) as StoredIndex;
      if (stored.version !== INDEX_VERSION || typeof stored.files !== 'object') return false;
      this.files = new Map(Object.entries(stored.files));
      this.invalidate();
      this.ready = true;
      return true;
    } catch {
      return false;
    }
  }

  /** Re-scans the roots; with `force` every file is parsed again. Persists the result. */
  async refresh(options: { force?: boolean } = {}): Promise<RefreshReport> {
    if (options.force) this.files.clear();
    const report: RefreshReport = { files_parsed: 0, files_unchanged: 0, files_removed: 0 };
    const found = new Set<string>();
    const markdownFiles = await walk(this.docsRoot, (path) => /\.(md|markdown)$/i.test(path));
    const codeFiles = (
      await Promise.all(
        this.options.sourceRoots.map((root) =>
          walk(resolve(root), (path) => languageOf(path) !== undefined && !TEST_FILE.test(path)),
        ),
      )
    ).flat();
    for (const [absolutePath, kind] of [
      ...markdownFiles.map((path) => [path, 'markdown'] as const),
      ...codeFiles.map((path) => [path, 'code'] as const),
    ]) {
      const path = this.relativePath(absolutePath);
      if (found.has(path)) continue;
      found.add(path);
      if (await this.refreshFile(absolutePath, kind)) report.files_parsed++;
      else report.files_unchanged++;
    }
    for (const path of [...this.files.keys()]) {
      if (!found.has(path)) {
        this.files.delete(path);
        report.files_removed++;
      }
    }
    this.invalidate();
    this.ready = true;
    await this.save();
    return report;
  }

  /** Re-reads one file (parsing it only when its content changed); returns whether it was parsed. */
  async refreshFile(
    absolutePath: string,
    kind: 'markdown' | 'code' = /\.(md|markdown)$/i.test(absolutePath) ? 'markdown' : 'code',
  ): Promise<boolean> {
    const path = this.relativePath(absolutePath);
    const previous = this.files.get(path);
    let info;
    try {
      info = await stat(absolutePath);
    } catch {
      if (previous) {
        this.files.delete(path);
        this.invalidate();
      }
      return false;
    }
    if (previous && previous.size === info.size && previous.mtime_ms === info.mtimeMs) return false;
    const text = await readFile(absolutePath, 'utf8');
    const hash = createHash('sha256').update(text).digest('hex');
    if (previous && previous.hash === hash) {
      previous.mtime_ms = info.mtimeMs;
      previous.size = info.size;
      return false;
    }
    const language = languageOf(absolutePath);
    this.files.set(path, {
      hash,
      size: info.size,
      mtime_ms: info.mtimeMs,
      kind,
      sections: kind === 'markdown' ? parseMarkdown(text, path) : [],
      elements: kind === 'code' && language ? parseCode(text, path, language) : [],
    });
    this.invalidate();
    return true;
  }

  async save(): Promise<void> {
    const stored: StoredIndex = {
      version: INDEX_VERSION,
      built_at: new Date().toISOString(),
      files: Object.fromEntries(this.files),
    };
    await writeFileAtomically(this.options.indexPath, JSON.stringify(stored));
  }

  sections(): MarkdownSection[] {
    if (!this.sectionCache) this.sectionCache = [...this.files.values()].flatMap((record) => record.sections);
    return this.sectionCache;
  }

  elements(): CodeElement[] {
    if (!this.elementCache) this.elementCache = [...this.files.values()].flatMap((record) => record.elements);
    return this.elementCache;
  }

  /** BM25 over title (×3), tags (×2) and content of the sections. */
  sectionSearch(): SearchIndex<MarkdownSection> {
    if (!this.sectionSearchCache) {
      this.sectionSearchCache = new SearchIndex(this.sections(), (section) => [
        { text: section.title, weight: 3 },
        { text: section.tags.join(' '), weight: 2 },
        { text: section.content, weight: 1 },
      ]);
    }
    return this.sectionSearchCache;
  }

  /** BM25 over name (×3), signature and doc comment of the code elements. */
  elementSearch(): SearchIndex<CodeElement> {
    if (!this.elementSearchCache) {
      this.elementSearchCache = new SearchIndex(this.elements(), (element) => [
        { text: element.qualified_name, weight: 3 },
        { text: element.signature, weight: 1 },
        { text: element.docstring, weight: 1 },
      ]);
    }
    return this.elementSearchCache;
  }

  /** Paths in the index: relative to the base directory with `/`, or absolute when outside it. */
  relativePath(absolutePath: string): string {
    const relativeToBase = relative(this.baseDir, absolutePath);
    if (relativeToBase.startsWith('..') || isAbsolute(relativeToBase)) return absolutePath.split(sep).join('/');
    return relativeToBase.split(sep).join('/');
  }

  absolutePath(indexPath: string): string {
    return isAbsolute(indexPath) ? indexPath : join(this.baseDir, indexPath);
  }

  private invalidate(): void {
    this.sectionCache = undefined;
    this.elementCache = undefined;
    this.sectionSearchCache = undefined;
    this.elementSearchCache = undefined;
  }
}

/** Regular files under `root` accepted by `accept`; hidden and build directories and links are skipped. */
async function walk(root: string, accept: (path: string) => boolean): Promise<string[]> {
  const found: string[] = [];
  const pending = [root];
  while (pending.length > 0) {
    const directory = pending.pop()!;
    let entries: Dirent[];
    try {
      entries = await readdir(directory, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      if (entry.name.startsWith('.')) continue;
      const path = join(directory, entry.name);
      if (entry.isDirectory()) {
        if (!SKIPPED_DIRECTORIES.has(entry.name)) pending.push(path);
      } else if (entry.isFile() && accept(path)) {
        found.push(path);
      }
    }
  }
  return found.sort();
}
